import { expect } from "chai";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { accountBalance, ACCOUNTS } from "../../../src/ledger/ledger.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { onboard } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { pollResult } from "../../fixtures/results.js";

const OPERATOR = "operator-key-for-tests-0123456789";
const DISPUTE_PRICE = 5_000_000n;
type Json = Record<string, any>;

describe("arbitration.dispute-settlement: operator panel verdicts, refunds, dispute history", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let buyer: Buyer;
  let requester: RegisteredAgent;
  let provider: RegisteredAgent;
  before(async () => {
    srv = await startTestServer({ OPERATOR_API_KEY: OPERATOR });
    buyer = await newBuyer(srv, 30);
    requester = await registerAgent(srv, { evm_address: buyer.address });
    await onboard(srv, buyer, requester);
    provider = await registerAgent(srv);
  });
  after(() => srv.close());

  const json = { "content-type": "application/json" };
  const operator = bearer(OPERATOR);
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = json) => {
    const res = await fetch(`${srv.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  // The client's default spend cap is $1; the dispute costs $5, so the buyer raises it to exactly that.
  const payFrom = (b: Buyer) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(b.account)).setSpendControls({ maxAmountPerPayment: "$5" }));
  const dispute = async (b: Buyer, input: Json) => {
    const res = await payFrom(b)(`${srv.url}/v1/services/arbitration.dispute-settlement`, { method: "POST", headers: json, body: JSON.stringify(input) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const noteBalance = async () => (await call("GET", "/v1/wallet/balance", undefined, { "x-402-payment": requester.note })).body.remaining_usd as number;
  const decide = (id: string, verdict: string, rationale = "the deliverable does not match the task") => call("POST", `/v1/admin/disputes/${id}/decide`, { verdict, rationale }, operator);
  const openDisputeOf = async (jobId: string) => ((await call("GET", "/v1/admin/disputes?state=open", undefined, operator)).body.disputes as Json[]).find((d) => d.job_id === jobId)!;

  /** A marketplace job of 0.03 from the requester to the provider, completed (payout pending) unless told otherwise. */
  async function completedJob(complete = true): Promise<{ jobId: string; payoutId: string }> {
    const req = await call("POST", "/a2a/requests", { capability_id: "research", task_description: "summarize the x402 spec", budget_usd: 0.03 }, { ...bearer(requester.api_key), "x-402-payment": requester.note });
    const bid = await call("POST", `/a2a/requests/${req.body.request_id}/bids`, { capability_id: "research", agent_name: provider.name, display_name: "offer", price_usd: 0.03 }, bearer(provider.api_key));
    const job = await call("POST", `/a2a/bids/${bid.body.bid_id}/accept`, {}, bearer(requester.api_key));
    if (!complete) return { jobId: job.body.job_id, payoutId: "" };
    const done = await call("POST", `/a2a/jobs/${job.body.job_id}/complete`, { result_summary: "five bullets" }, bearer(provider.api_key));
    expect(done.body.state).to.equal("completed");
    return { jobId: job.body.job_id, payoutId: done.body.payout.payout_id };
  }

  it("refuses, before any charge, a missing job, a job not delivered, and a payer who is not the job's requester", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const missing = await call("POST", "/v1/services/arbitration.dispute-settlement", { job_id: "job_nothere", claim: "never delivered" });
    expect(missing.body).to.include({ status: "insufficient_subject", charged: false });
    expect((await call("POST", "/v1/services/arbitration.dispute-settlement", { job_id: "job_x" })).status).to.equal(400); // no claim
    const assigned = await completedJob(false);
    const early = await call("POST", "/v1/services/arbitration.dispute-settlement", { job_id: assigned.jobId, claim: "late" });
    expect(early.body).to.include({ status: "insufficient_subject", charged: false });
    expect(early.body.reason).to.contain("only a delivered job");

    const { jobId } = await completedJob();
    const stranger = await newBuyer(srv, 10);
    const strangerAgent = await registerAgent(srv, { evm_address: stranger.address });
    await onboard(srv, stranger, strangerAgent);
    const strangerBefore = await usdcBalance(srv, stranger.address);
    const refused = await dispute(stranger, { job_id: jobId, claim: "not mine to contest" });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal("not_a_party");
    expect(await usdcBalance(srv, stranger.address)).to.equal(strangerBefore);
    const firing = (await srv.ds.manager.findBy(ProofRecordEntity, { kind: 30014 })).map((r) => JSON.parse(r.bodyJson)).find((b) => b.subject === stranger.address);
    expect(firing).to.include({ gate: "party_check", reason: "not_a_party", sku_id: "arbitration.dispute-settlement" });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("upheld against a pending payout: the payout is cancelled and the price returns to the requester's note; the verdict is proof kind 30129", async () => {
    const { jobId, payoutId } = await completedJob();
    const noteBefore = await noteBalance();
    const usdcBefore = await usdcBalance(srv, buyer.address);
    const filed = await dispute(buyer, { job_id: jobId, claim: "the summary has two bullets, not five" });
    expect(filed.status).to.equal(200);
    expect(filed.body).to.include({ status: "pending", charged: true });
    expect(await usdcBalance(srv, buyer.address)).to.equal(usdcBefore - DISPUTE_PRICE);
    // Not run by a worker: it waits for the operator panel.
    await new Promise((r) => setTimeout(r, 400));
    expect((await call("GET", `/v1/services/result/${filed.body.job_id}`, undefined)).body.status).to.equal("pending");

    // While the dispute is open: no second dispute on the job, and the payout is held.
    expect((await call("POST", "/v1/services/arbitration.dispute-settlement", { job_id: jobId, claim: "again" })).body.status).to.equal("insufficient_subject");
    const held = await call("POST", `/v1/admin/payouts/${payoutId}/release`, {}, operator);
    expect(held.body.error.code).to.equal("dispute_open");

    const open = await openDisputeOf(jobId);
    expect(open).to.include({ state: "open", claimant: buyer.address, claim: "the summary has two bullets, not five", service_job_id: filed.body.job_id });
    expect((await call("POST", `/v1/admin/disputes/${open.dispute_id}/decide`, { verdict: "upheld" }, bearer("wrong-key"))).status).to.equal(401);
    expect((await decide(open.dispute_id, "maybe")).body.error.code).to.equal("invalid_verdict");
    expect((await decide(open.dispute_id, "upheld", "  ")).body.error.code).to.equal("invalid_rationale");

    const payable = () => accountBalance(srv.ds.manager, ACCOUNTS.providerPayable(provider.agent_id));
    const payableBefore = await payable();
    const decided = await decide(open.dispute_id, "upheld");
    expect(decided.status).to.equal(200);
    expect(decided.body.dispute).to.include({ state: "decided", verdict: "upheld" });
    expect(decided.body.refund_usd).to.equal(0.03);
    expect(await noteBalance()).to.be.closeTo(noteBefore + 0.03, 1e-9);
    expect((await call("GET", `/v1/admin/payouts?state=cancelled`, undefined, operator)).body.payouts.map((p: Json) => p.payout_id)).to.include(payoutId);
    expect((await call("POST", `/v1/admin/payouts/${payoutId}/release`, {}, operator)).body.error.code).to.equal("payout_cancelled");
    expect(await payable()).to.equal(payableBefore + 24_000n); // the provider's 0.024 net is no longer owed

    // Decided once: the same verdict again is the same answer, another verdict is refused.
    expect((await decide(open.dispute_id, "upheld")).body.dispute.proof_id).to.equal(decided.body.dispute.proof_id);
    expect((await decide(open.dispute_id, "overturned")).body.error.code).to.equal("dispute_decided");
    expect(await noteBalance()).to.be.closeTo(noteBefore + 0.03, 1e-9);

    const result = await pollResult(srv, filed.body.job_id);
    expect(result.status).to.equal("delivered");
    expect(result.deliverable).to.include({ dispute_id: open.dispute_id, job_id: jobId, verdict: "upheld", adjudicator: "operator_panel", refund_amount: "30000", proof_id: decided.body.dispute.proof_id });
    expect(result.deliverable.dispute_disclosure).to.include({ adjudicator: "operator_panel", unilateral_verdict: true, buyer_contest_channel: false });
    const proof = await call("GET", `/v1/proofs/${decided.body.dispute.proof_id}`, undefined);
    expect(proof.status).to.equal(200);
    expect(JSON.stringify(proof.body)).to.contain("30129");
    expect(JSON.stringify(proof.body)).to.contain(filed.body.payment_proof.tx_hash);
    await expectLedgerConsistent(srv.ds);
  });

  it("overturned changes nothing; upheld after the payout was released refunds at the service's expense; both show in the dispute history", async () => {
    const { jobId, payoutId } = await completedJob();
    expect((await call("POST", `/v1/admin/payouts/${payoutId}/release`, {}, operator)).body.payout.state).to.equal("released");
    const noteBefore = await noteBalance();

    const first = await dispute(buyer, { job_id: jobId, claim: "I did not like it" });
    const overturned = await decide((await openDisputeOf(jobId)).dispute_id, "overturned", "the deliverable matches the task");
    expect(overturned.body.refund_usd ?? 0).to.equal(0);
    expect(await noteBalance()).to.equal(noteBefore);
    expect((await pollResult(srv, first.body.job_id)).deliverable.verdict).to.equal("overturned");

    await dispute(buyer, { job_id: jobId, claim: "new evidence: the sources are fabricated" });
    const upheld = await decide((await openDisputeOf(jobId)).dispute_id, "upheld", "two cited sources do not exist");
    expect(upheld.body.refund_usd).to.equal(0.03);
    expect(await noteBalance()).to.be.closeTo(noteBefore + 0.03, 1e-9);
    expect(await accountBalance(srv.ds.manager, ACCOUNTS.disputeRefunds)).to.equal(30_000n);
    expect((await call("GET", `/a2a/jobs/${jobId}`, undefined, bearer(requester.api_key))).body.state).to.equal("failed");
    await expectLedgerConsistent(srv.ds);

    const lookup = await payFrom(buyer)(`${srv.url}/v1/services/reputation.lookup`, { method: "POST", headers: json, body: JSON.stringify({ task: `agent_id: ${provider.name}` }) });
    const looked = ((await lookup.json()) as Json).deliverable;
    const history = looked.disputes; // with the previous test's upheld verdict
    expect(history).to.include({ recorded: 3, upheld: 2, overturned: 1, withdrawn: 0 });
    expect(history.recent[0]).to.include({ job_id: jobId, verdict: "upheld" });

    const prehire = await payFrom(buyer)(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: json, body: JSON.stringify({ subject: provider.name }) });
    const report = await pollResult(srv, ((await prehire.json()) as Json).job_id);
    expect(report.deliverable.disputes).to.include({ recorded: 3, upheld: 2, overturned: 1 });
    expect(report.deliverable.flagged_incidents.join(" ")).to.contain("2 dispute(s) upheld");
    // One engine behind every read: the badge SKU, prehire and the reputation route agree with reputation.lookup.
    const badge = await payFrom(buyer)(`${srv.url}/v1/services/agent.trust-badge`, { method: "POST", headers: json, body: JSON.stringify({ subject: provider.name }) });
    const badged = ((await badge.json()) as Json).deliverable;
    expect(looked.score).to.be.greaterThan(0);
    expect(badged).to.include({ score: looked.score, badge: looked.badge, registered: true });
    expect(report.deliverable.reputation).to.deep.equal({ score: looked.score, badge: looked.badge });
  });

  it("parallel verdicts on one dispute: exactly one is recorded and the refund is paid once", async () => {
    const { jobId } = await completedJob();
    const noteBefore = await noteBalance();
    await dispute(buyer, { job_id: jobId, claim: "wrong ticker analysed" });
    const { dispute_id } = await openDisputeOf(jobId);
    const verdicts = ["upheld", "overturned", "upheld", "withdrawn", "upheld", "overturned"];
    const answers = await Promise.all(verdicts.map((v, i) => decide(dispute_id, v, `panel member ${i} says ${v}`)));
    const won = answers.filter((a) => a.status === 200);
    expect(won).to.have.length(1);
    expect(answers.filter((a) => a.status !== 200).map((a) => a.body.error.code)).to.deep.equal(Array(5).fill("dispute_decided"));
    const verdict = won[0]!.body.dispute.verdict;
    expect(await noteBalance()).to.be.closeTo(noteBefore + (verdict === "upheld" ? 0.03 : 0), 1e-9);
    const proofs = await srv.ds.manager.query("SELECT COUNT(*) AS n FROM proof_records WHERE kind = 30129 AND body_json LIKE ?", [`%${dispute_id}%`]);
    expect(Number(proofs[0].n)).to.equal(1);
    await expectLedgerConsistent(srv.ds);
  });
});

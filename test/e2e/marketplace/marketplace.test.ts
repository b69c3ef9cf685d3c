import { expect } from "chai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { checkJournal } from "../../../src/ledger/ledger.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

const OPERATOR = "operator-key-for-tests-0123456789";
type Json = Record<string, any>;

describe("marketplace: requests, bids, jobs, payouts", function () {
  this.timeout(90_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ OPERATOR_API_KEY: OPERATOR });
  });
  after(() => srv.close());

  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${srv.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const post = (path: string, body: unknown, headers: Record<string, string>) => call("POST", path, body, headers);
  const asRequester = (a: RegisteredAgent) => ({ ...bearer(a.api_key), "x-402-payment": a.note });
  const balance = async (a: RegisteredAgent) => ((await call("GET", "/v1/wallet/balance", undefined, { "x-402-payment": a.note })).body.remaining_usd as number);
  const operator = { ...bearer(OPERATOR) };
  const postRequest = (a: RegisteredAgent, budget?: number) => post("/a2a/requests", { capability_id: "research", task_description: "summarize the x402 spec", ...(budget === undefined ? {} : { budget_usd: budget }), tags: ["spec"] }, asRequester(a));
  const bid = (p: RegisteredAgent, rid: string, extra: Json = {}) => post(`/a2a/requests/${rid}/bids`, { capability_id: "research", agent_name: p.name, display_name: `${p.name} offer`, ...extra }, bearer(p.api_key));

  it("runs the whole flow: escrow, ranked bids, accept, complete, fee on the payout, release in USDC once", async () => {
    const requester = await registerAgent(srv);
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const provider = await registerAgent(srv, { evm_address: wallet });
    const rival = await registerAgent(srv);

    const created = await postRequest(requester, 0.05);
    expect(created.status).to.equal(201);
    expect(created.body.request_id).to.match(/^req_/);
    expect(created.body.escrow).to.include({ amount_usd: 0.05, held_usd: 0.05, state: "held" });
    expect(await balance(requester)).to.equal(0.95);

    const b1 = await bid(provider, created.body.request_id, { price_per_call_usd: 0.03, eta_seconds: 600 });
    expect(b1.status).to.equal(201);
    expect(b1.body).to.include({ status: "bid_submitted", price_usd: 0.03, price_per_call_usd: 0.03, agent_name: provider.name });
    const b2 = await bid(rival, created.body.request_id, { price_usd: 0.05 });
    expect(b2.status).to.equal(201);
    const view = await call("GET", `/a2a/requests/${created.body.request_id}`, undefined, {});
    expect(view.body.bids.map((b: Json) => b.bid_id)).to.deep.equal([b1.body.bid_id, b2.body.bid_id]); // cheaper and faster ranks first
    expect(view.body.bids[0].score).to.be.greaterThan(view.body.bids[1].score);
    expect((await call("GET", "/a2a/requests/open", undefined, {})).body.requests.map((r: Json) => r.request_id)).to.include(created.body.request_id);

    expect((await post(`/a2a/bids/${b1.body.bid_id}/accept`, {}, bearer(provider.api_key))).status).to.equal(403);
    const accepted = await post(`/a2a/bids/${b1.body.bid_id}/accept`, {}, bearer(requester.api_key));
    expect(accepted.status).to.equal(200);
    expect(accepted.body).to.include({ state: "assigned", amount_usd: 0.03, provider_agent_id: provider.agent_id });
    expect(await balance(requester)).to.equal(0.97); // the unspent 0.02 of the escrow came back
    expect((await post(`/a2a/bids/${b2.body.bid_id}/accept`, {}, bearer(requester.api_key))).status).to.equal(409);

    const jid = accepted.body.job_id;
    expect((await call("GET", `/a2a/jobs/${jid}`, undefined, bearer(requester.api_key))).status).to.equal(200);
    expect((await call("GET", `/a2a/jobs/${jid}`, undefined, bearer(provider.api_key))).status).to.equal(200);
    expect((await call("GET", `/a2a/jobs/${jid}`, undefined, bearer(rival.api_key))).status).to.equal(403);
    const byRequester = await post(`/a2a/jobs/${jid}/complete`, { result_summary: "done" }, bearer(requester.api_key));
    expect(byRequester.status).to.equal(403);
    expect((await post(`/a2a/jobs/${jid}/complete`, { result_summary: "   " }, bearer(provider.api_key))).body.error.code).to.equal("empty_result");
    const done = await post(`/a2a/jobs/${jid}/complete`, { result_summary: "the spec in 5 bullets", deliverable_markdown: "# x402\\n..." }, bearer(provider.api_key));
    expect(done.status).to.equal(200);
    expect(done.body.state).to.equal("completed");
    // Shadow mode: 2000 bps charged; the dynamic fee (disclosed) adds +100 for a first-time pair.
    expect(done.body.payout).to.include({ gross_usd: 0.03, svc_fee_bps: 2000, fee_usd: 0.006, net_usd: 0.024, dynamic_fee_bps: 2100, state: "pending" });
    expect((await post(`/a2a/jobs/${jid}/complete`, { result_summary: "again" }, bearer(provider.api_key))).status).to.equal(409);

    const pending = await call("GET", "/v1/admin/payouts?state=pending", undefined, operator);
    const payout = pending.body.payouts.find((p: Json) => p.job_id === jid);
    expect(payout).to.include({ net_usd: 0.024 });
    const released = await post(`/v1/admin/payouts/${payout.payout_id}/release`, {}, operator);
    expect(released.status).to.equal(200);
    expect(released.body.payout).to.include({ state: "released", rail: "usdc" });
    expect(await usdcBalance(srv, wallet)).to.equal(24_000n);
    const again = await post(`/v1/admin/payouts/${payout.payout_id}/release`, {}, operator);
    expect(again.body.payout.tx_hash).to.equal(released.body.payout.tx_hash);
    expect(await usdcBalance(srv, wallet)).to.equal(24_000n); // paid once
    expect((await call("GET", `/a2a/jobs/${jid}`, undefined, bearer(provider.api_key))).body.state).to.equal("paid");
    const receipt = await srv.ds.manager.findOneByOrFail(ProofRecordEntity, { kind: 30106, settlementRef: released.body.payout.tx_hash });
    const proof = (await call("GET", `/v1/proofs/${receipt.proofId}`, undefined, {})).body.proof;
    expect(proof.receipt).to.deep.equal({ svc_fee_bps: 2000, svc_fee_usd: 0.006, provider_payout_usd: 0.024 });
    await expectLedgerConsistent(srv.ds);
  });

  it("credits a provider without a payout wallet on its starter-credit note", async () => {
    const requester = await registerAgent(srv);
    const provider = await registerAgent(srv);
    const rid = (await postRequest(requester)).body.request_id;
    const b = await bid(provider, rid);
    const job = (await post(`/a2a/bids/${b.body.bid_id}/accept`, {}, bearer(requester.api_key))).body;
    expect(job.amount_usd).to.equal(0.01); // no price: the budget (default 0.01)
    const done = await post(`/a2a/jobs/${job.job_id}/complete`, { result_summary: "ok" }, bearer(provider.api_key));
    const released = await post(`/v1/admin/payouts/${done.body.payout.payout_id}/release`, {}, operator);
    expect(released.body.payout).to.include({ rail: "starter_credit", net_usd: 0.008 });
    expect(await balance(provider)).to.equal(1.008);
    await expectLedgerConsistent(srv.ds);
  });

  it("refuses what the spec refuses: no note 402, other identity 403, wrong name 403, own request, bad input, unknown ids", async () => {
    const a = await registerAgent(srv);
    const b = await registerAgent(srv);
    const body = { capability_id: "research", task_description: "x" };
    expect((await post("/a2a/requests", body, bearer(a.api_key))).status).to.equal(402);
    expect((await post("/a2a/requests", body, { ...bearer(a.api_key), "x-402-payment": b.note })).body.error.code).to.equal("requester_id_mismatch");
    expect((await post("/a2a/requests", { ...body, requester_id: b.name }, asRequester(a))).status).to.equal(403);
    expect((await post("/a2a/requests", body, { "content-type": "application/json", "x-402-payment": a.note })).status).to.equal(401);
    expect((await post("/a2a/requests", { capability_id: "research" }, asRequester(a))).status).to.equal(400);
    expect((await post("/a2a/requests", { ...body, budget_usd: 5 }, asRequester(a))).status).to.equal(402); // more than the note holds
    expect((await post("/a2a/requests", { ...body, budget_usd: 0 }, asRequester(a))).status).to.equal(400);
    const rid = (await postRequest(a)).body.request_id;
    expect((await post(`/a2a/requests/${rid}/bids`, { capability_id: "research", agent_name: a.name, display_name: "x" }, bearer(b.api_key))).body.error.code).to.equal("agent_name_mismatch");
    expect((await bid(a, rid)).body.error.code).to.equal("own_request");
    expect((await bid(b, rid, { price_usd: 99 })).status).to.equal(400);
    expect((await bid(b, rid)).status).to.equal(201);
    expect((await bid(b, rid)).body.error.code).to.equal("bid_exists");
    expect((await call("GET", "/a2a/requests/req_nope", undefined, {})).body.error.code).to.equal("request_not_found");
    expect((await bid(b, "req_nope")).status).to.equal(404);
    expect((await call("GET", "/a2a/requests", undefined, {})).status).to.equal(405);
    expect((await call("GET", "/v1/admin/payouts", undefined, bearer(a.api_key))).status).to.equal(401);
  });

  it("cancelling returns the escrow to the note and closes the request to bids", async () => {
    const a = await registerAgent(srv);
    const b = await registerAgent(srv);
    const before = await balance(a);
    const rid = (await postRequest(a, 0.2)).body.request_id;
    expect(await balance(a)).to.be.closeTo(before - 0.2, 1e-9);
    const cancelled = await post(`/a2a/requests/${rid}/cancel`, {}, bearer(a.api_key));
    expect(cancelled.body).to.include({ state: "cancelled" });
    expect(cancelled.body.escrow).to.include({ held_usd: 0, state: "returned" });
    expect(await balance(a)).to.equal(before);
    expect((await bid(b, rid)).body.error.code).to.equal("request_closed");
    expect((await call("GET", "/a2a/requests/open", undefined, {})).body.requests.map((r: Json) => r.request_id)).to.not.include(rid);
    await expectLedgerConsistent(srv.ds);
  });

  it("expires a request after its time: escrow back to the note, no bid or accept afterwards", async () => {
    const short = await startTestServer({ OPERATOR_API_KEY: OPERATOR, REQUEST_TTL_HOURS: String(1 / 3600) }); // one second
    try {
      const req = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
        fetch(`${short.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
      const a = await registerAgent(short);
      const b = await registerAgent(short);
      const rid = (await req("POST", "/a2a/requests", { capability_id: "research", task_description: "x", budget_usd: 0.1 }, asRequester(a))).body.request_id;
      const bidded = await req("POST", `/a2a/requests/${rid}/bids`, { capability_id: "research", agent_name: b.name, display_name: "x" }, bearer(b.api_key));
      await new Promise((r) => setTimeout(r, 1_200));
      expect((await req("POST", `/a2a/bids/${bidded.body.bid_id}/accept`, {}, bearer(a.api_key))).body.error.code).to.be.oneOf(["request_expired", "request_closed"]);
      const view = (await req("GET", `/a2a/requests/${rid}`, undefined, {})).body;
      expect(view.state).to.equal("expired");
      expect(view.escrow.held_usd).to.equal(0);
      expect((await req("GET", "/v1/wallet/balance", undefined, { "x-402-payment": a.note })).body.remaining_usd).to.equal(1);
      const c = await registerAgent(short);
      expect((await req("POST", `/a2a/requests/${rid}/bids`, { capability_id: "research", agent_name: c.name, display_name: "late" }, bearer(c.api_key))).body.error.code).to.equal("request_closed");
      await expectLedgerConsistent(short.ds);
    } finally {
      await short.close();
    }
  });

  it("100 parallel requests draining one note never overspend it", async () => {
    const a = await registerAgent(srv);
    const results = await Promise.all(Array.from({ length: 100 }, () => postRequest(a, 0.03)));
    const ok = results.filter((r) => r.status === 201).length;
    expect(ok).to.equal(33); // 33 x 0.03 = 0.99 of the 1.00 note
    expect(results.filter((r) => r.status === 402)).to.have.length(67);
    expect(await balance(a)).to.be.closeTo(0.01, 1e-9);
    expect(await checkJournal(srv.ds.manager)).to.deep.equal([]);
  });

  it("parallel accepts of two bids assign one job; parallel completes complete once", async () => {
    const a = await registerAgent(srv);
    const [p1, p2] = await Promise.all([registerAgent(srv), registerAgent(srv)]);
    const rid = (await postRequest(a, 0.1)).body.request_id;
    const [b1, b2] = await Promise.all([bid(p1!, rid, { price_usd: 0.04 }), bid(p2!, rid, { price_usd: 0.06 })]);
    const accepts = await Promise.all([b1!, b2!, b1!, b2!].map((b) => post(`/a2a/bids/${b.body.bid_id}/accept`, {}, bearer(a.api_key))));
    const won = accepts.filter((r) => r.status === 200);
    expect(won).to.have.length(1);
    expect(accepts.filter((r) => r.status === 409)).to.have.length(3);
    const job = won[0]!.body;
    const provider = job.provider_agent_id === p1!.agent_id ? p1! : p2!;
    const completes = await Promise.all(Array.from({ length: 6 }, () => post(`/a2a/jobs/${job.job_id}/complete`, { result_summary: "done" }, bearer(provider.api_key))));
    expect(completes.filter((r) => r.status === 200)).to.have.length(1);
    expect(completes.filter((r) => r.status === 409)).to.have.length(5);
    await expectLedgerConsistent(srv.ds);
  });
});

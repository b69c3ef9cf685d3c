import { expect } from "chai";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { ServiceJobEntity } from "../../../src/jobs/service-job.entity.js";
import { COUNCIL_ROLE_ORDER } from "../../../src/panels/roles.js";
import { CouncilOutput } from "../../../src/skus/procurement-council.js";
import { anchoredProof, expectVerifiedByCli } from "../../fixtures/audit-e2e.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { llmJobSuite } from "../../fixtures/llm-jobs.js";
import { panelResponder, turnOf } from "../../fixtures/panel-responder.js";
import { pollResult, pollUntil } from "../../fixtures/results.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";

const SKU = "procurement.council";
const PRICE = 2_000_000n;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("procurement.council: a panel decides a purchase, its deliberation recorded on the proof rail (async)", function () {
  this.timeout(120_000);
  const { llm, up, pay, usageOf } = llmJobSuite(SKU, {
    env: { LLM_MODELS: "procurement=council-model-7b", LLM_MAX_RETRIES: "0", ANCHOR_BATCH_SIZE: "1000", ANCHOR_MAX_WAIT_SECONDS: "0", ANCHOR_POLL_MS: "100" },
    fundUsd: 50,
    maxUsd: 2,
  });

  const order = async (body: unknown) => {
    const res = await pay(body);
    expect(res.status, await res.clone().text()).to.equal(200);
    return ((await res.json()) as Json).job_id as string;
  };

  it("decides between vendors for the list price, records the transcript hash as kind 30110 and svc verify passes once anchored", async () => {
    const before = await up.balance();
    const options = ["Northwind Hosting", "Contoso Cloud", "Fabrikam Servers"];
    llm.respond(
      panelResponder({
        opinion: (t) => ({ position: t.seat === "P2" ? "Northwind Hosting" : "Contoso Cloud" }),
        rebuttal: () => ({ position: "Contoso Cloud" }),
        vote: (t) => ({ vote: t.seat === "P2" ? "Northwind Hosting" : t.seat === "P5" ? "abstain" : "Contoso Cloud", confidence: 0.75 }),
      }),
    );
    const question = "Which managed hosting provider should we contract for the 2026 renewal?";
    const jobId = await order({ question, options, panel_size: 5, rounds: 1, context: "Budget 120k EUR a year; EU data residency is required." });
    const done = await pollResult(up.srv, jobId);
    expect(done.status, done.error).to.equal("delivered");
    const d = done.deliverable;
    expect(() => CouncilOutput.parse(d)).not.to.throw();
    expect(done.powered_by).to.equal("svc-panels/council (council-model-7b)");
    expect(await up.balance()).to.equal(before - PRICE);

    expect(llm.requests).to.have.length(5 * (1 + 1 + 1));
    expect(llm.requests.every((r) => r.body.model === "council-model-7b")).to.equal(true);
    for (const t of llm.requests.map(turnOf).filter((x) => x.phase === "opinion")) {
      expect(t.req.body.messages[0]!.content).to.contain("deliberating a procurement decision");
      expect(t.req.lastUser).not.to.match(/marker P\d/);
    }
    expect(d).to.include({ verdict: "Contoso Cloud", decided_by: "plurality", panel_size: 5, rounds: 1, model: "council-model-7b" });
    expect(d.vote_breakdown.counts.map((c: Json) => [c.option, c.votes])).to.deep.equal([["Northwind Hosting", 1], ["Contoso Cloud", 3], ["Fabrikam Servers", 0]]);
    expect(d.vote_breakdown.abstained_by).to.deep.equal(["P5"]);
    expect(d.panel.map((p: Json) => p.role)).to.deep.equal(COUNCIL_ROLE_ORDER.slice(0, 5));
    expect(d.transcript_sha256).to.equal(sha256(canonicalJson(d.transcript)));

    // The proof record: prepared in the deliverable, written with the delivery, public fields only.
    expect(d.proof_url).to.equal(`/v1/proofs/${d.proof_id}`);
    expect(d.proof_record).to.include({ kind: 30110, task_class: "deliberation", settlement_ref: d.deliberation_id, verify: `svc verify ${d.proof_id}` });
    const job = await up.srv.ds.manager.findOneByOrFail(ServiceJobEntity, { jobId });
    expect(d.proof_record.body).to.deep.equal({
      deliberation_id: d.deliberation_id,
      sku_id: SKU,
      question_sha256: sha256(question),
      options_sha256: sha256(canonicalJson(options)),
      verdict_index: 2,
      decided_by: "plurality",
      votes: [1, 3, 0],
      abstentions: 1,
      panel: COUNCIL_ROLE_ORDER.slice(0, 5).map((role, i) => ({ panelist: `P${i + 1}`, role })),
      rounds: 1,
      models: ["council-model-7b"],
      transcript_sha256: d.transcript_sha256,
      payer: up.buyer.address,
      payment_id: job.paymentId,
      deliberated_at: d.deliberated_at,
    });
    const proof = await anchoredProof(up.srv, d.proof_id);
    expect(proof).to.include({ kind: 30110, task_class: "deliberation", settlement_ref: d.deliberation_id, record_sha256: d.proof_record.record_sha256 });
    expect(proof.body).to.deep.equal(d.proof_record.body);
    // The buyer's question, context and vendor names stay off the public rail.
    expect(JSON.stringify(proof)).not.to.contain("Contoso").and.not.to.contain("renewal").and.not.to.contain("EU data residency");
    expect(await up.srv.ds.manager.countBy(ProofRecordEntity, { proofId: d.proof_id })).to.equal(1);
    await expectVerifiedByCli(up.srv, d.proof_id);

    const usage = await usageOf(jobId);
    expect(usage).to.have.length(15);
    expect(usage.every((u) => u.family === "procurement" && u.model === "council-model-7b")).to.equal(true);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("breaks a council tie by the chair's vote", async () => {
    llm.respond(panelResponder({ vote: (t) => ({ vote: ["P1", "P3"].includes(t.seat) ? "B" : ["P2", "P4"].includes(t.seat) ? "A" : "abstain", confidence: 0.6 }) }));
    const done = await pollResult(up.srv, await order({ task: "Pick the payroll provider", options: ["A", "B"], panel_size: 5, rounds: 1 }));
    expect(done.status, done.error).to.equal("delivered");
    expect(done.deliverable).to.include({ verdict: "B", decided_by: "chair", forced: true });
    expect(done.deliverable.proof_record.body).to.include({ verdict_index: 2, decided_by: "chair" });
  });

  it("leaves no proof record when the job fails and is refunded", async () => {
    const before = await up.balance();
    const records = await up.srv.ds.manager.countBy(ProofRecordEntity, { taskClass: "deliberation" });
    llm.respond(() => ({ content: "Let me think about the vendors first." }));
    const failed = await pollUntil(up.srv, await order({ question: "Renew the support contract?", panel_size: 5, rounds: 1 }), ["refunded"]);
    expect(failed.error).to.match(/^failed after 3 attempts/).and.to.contain("after one repair request").and.to.contain("not valid JSON");
    expect(await up.balance()).to.equal(before);
    expect(await up.srv.ds.manager.countBy(ProofRecordEntity, { taskClass: "deliberation" })).to.equal(records);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("refuses bad input before any challenge and charges nothing", async () => {
    await expectBadInputRefused(up, SKU, [
      [{ options: ["A", "B"] }, "question"],
      [{ question: "Which vendor?", options: ["A", "A"] }, "options"],
      [{ question: "Which vendor?", options: ["A", "undecided"] }, "options"],
      [{ question: "Which vendor?", panel_size: 3 }, "panel_size"],
      [{ question: "Which vendor?", context: "x".repeat(20_001) }, "context"],
    ]);
    expect(llm.requests).to.deep.equal([]);
  });
});

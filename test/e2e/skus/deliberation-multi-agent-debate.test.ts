import { expect } from "chai";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { PanelOutput } from "../../../src/panels/panel-deliverable.js";
import { DEBATE_ROLE_ORDER } from "../../../src/panels/roles.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectRefundedAfterRepair, expectUnavailableWithoutLlm, llmJobSuite } from "../../fixtures/llm-jobs.js";
import { TEST_LLM_MODEL } from "../../fixtures/llm-server.js";
import { panelResponder, turnOf } from "../../fixtures/panel-responder.js";
import { pollResult } from "../../fixtures/results.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { startTestServer } from "../../fixtures/test-server.js";

const SKU = "deliberation.multi-agent-debate";
const PRICE = 2_000_000n;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("deliberation.multi-agent-debate: a panel deliberates, votes and is forced to a verdict (async)", function () {
  this.timeout(120_000);
  const { llm, up, order, usageOf } = llmJobSuite(SKU, { env: { LLM_MAX_RETRIES: "0" }, fundUsd: 100, maxUsd: 2 });

  it("is listed as available with its schemas when an LLM is configured", async () => {
    const catalog = (await (await fetch(`${up.srv.url}/v1/services`)).json()) as Json;
    const s = (catalog.services as Json[]).find((x) => x.sku_id === SKU)!;
    expect(s.available).to.equal(true);
    expect(s["x-input-schema"].properties).to.include.keys("question", "options", "panel_size", "roles", "rounds");
    expect(s["x-output-schema"].required).to.include.members(["verdict", "vote_breakdown", "panel", "transcript_sha256", "ai_disclosure", "model"]);
  });

  it("runs a paid 7-panelist debate: independent first opinions, 2 rebuttal rounds, a vote, the verdict and the transcript hash", async () => {
    const before = await up.balance();
    // Four open for "yes", three for "no"; P5 is persuaded in round 2; P6 votes no, P7 abstains.
    llm.respond(
      panelResponder({
        opinion: (t) => ({ position: ["P1", "P2", "P3", "P4"].includes(t.seat) ? "yes" : "no", confidence: 0.7 }),
        rebuttal: (t) => ({ position: ["P1", "P2", "P3", "P4"].includes(t.seat) || (t.seat === "P5" && t.round === 2) ? "yes" : "no" }),
        vote: (t) => ({ vote: t.seat === "P6" ? "no" : t.seat === "P7" ? "abstain" : "yes", confidence: 0.8 }),
      }),
    );
    const question = "Should the team adopt trunk-based development for the payments service?";
    const jobId = await order({ question, context: "Twelve engineers; releases weekly; two production incidents last quarter came from long-lived branches." });
    const done = await pollResult(up.srv, jobId);
    expect(done.status, done.error).to.equal("delivered");
    const d = done.deliverable;
    expect(() => PanelOutput.parse(d)).not.to.throw();
    expect(done.powered_by).to.equal(`svc-panels/debate (${TEST_LLM_MODEL})`);
    expect(await up.balance()).to.equal(before - PRICE);

    // 7 panelists × (1 first opinion + 2 rebuttal rounds + 1 vote) completions, no more.
    expect(llm.requests).to.have.length(7 * (1 + 2 + 1));
    expect(d.process.completions).to.equal(28);
    expect(d.process.repaired_answers).to.equal(0);
    const turns = llm.requests.map(turnOf);
    expect(turns.filter((t) => t.phase === "opinion").map((t) => t.seat).sort()).to.deep.equal(["P1", "P2", "P3", "P4", "P5", "P6", "P7"]);
    // First opinions saw only the question and the context: no other panelist's words.
    for (const t of turns.filter((x) => x.phase === "opinion")) {
      const prompt = t.req.body.messages.map((m) => m.content).join("\n");
      expect(prompt).to.contain(question).and.to.contain("two production incidents");
      expect(prompt).not.to.match(/marker P\d/);
    }
    // Each rebuttal sees the other six panelists' previous words; the vote sees every final position.
    for (const t of turns.filter((x) => x.phase === "rebuttal")) {
      const others = ["P1", "P2", "P3", "P4", "P5", "P6", "P7"].filter((s) => s !== t.seat);
      const shown = t.round === 1 ? (s: string) => `Opinion marker ${s}-opinion` : (s: string) => `Rebuttal marker ${s}-round-1`;
      for (const s of others) expect(t.req.lastUser).to.contain(shown(s));
    }
    for (const t of turns.filter((x) => x.phase === "vote")) expect(t.req.lastUser).to.contain("Rebuttal marker P7-round-2").and.to.contain("Rebuttal marker P1-round-2");

    expect(d).to.include({ question, verdict: "yes", decided_by: "plurality", forced: false, options_defaulted: true, context_supplied: true, panel_size: 7, rounds: 2, model: TEST_LLM_MODEL });
    expect(d.options).to.deep.equal(["yes", "no"]);
    expect(d.vote_breakdown).to.deep.include({ abstentions: 1, abstained_by: ["P7"], all_abstained: false, tie: false, absolute_majority: true });
    expect(d.vote_breakdown.counts).to.deep.equal([
      { option: "yes", votes: 5, summed_confidence: 4, voters: ["P1", "P2", "P3", "P4", "P5"] },
      { option: "no", votes: 1, summed_confidence: 0.8, voters: ["P6"] },
    ]);
    expect(d.panel.map((p: Json) => p.role)).to.deep.equal(DEBATE_ROLE_ORDER.slice(0, 7));
    const p5 = d.panel.find((p: Json) => p.panelist === "P5");
    expect(p5.first_opinion).to.deep.include({ position: "no", summary: "Opinion marker P5-opinion.", confidence: 0.7 });
    expect(p5.final_position).to.deep.equal({ position: "yes", statement: "Rebuttal marker P5-round-2.", confidence: 0.6, changed_from_first: true });
    expect(p5.vote).to.deep.equal({ choice: "yes", confidence: 0.8, rationale: "Vote marker P5-vote." });
    expect(d.panel.find((p: Json) => p.panelist === "P7").vote.choice).to.equal(null);
    expect(d.ai_disclosure).to.deep.include({ ai_generated: true, model: TEST_LLM_MODEL });

    // The transcript holds every completion, and its hash is recomputable from the deliverable.
    expect(d.transcript).to.have.length(28);
    expect(d.transcript.map((t: Json) => `${t.phase}:${t.round ?? "-"}`).filter((v: string, i: number, a: string[]) => a.indexOf(v) === i)).to.deep.equal(["opinion:-", "rebuttal:1", "rebuttal:2", "vote:-"]);
    expect(d.transcript_sha256).to.equal(sha256(canonicalJson(d.transcript)));

    // Every completion is accounted to the job's payment, none leaks onto the public answer.
    const usage = await usageOf(jobId);
    expect(usage).to.have.length(28);
    expect(usage.every((u) => u.family === "deliberation" && u.ok)).to.equal(true);
    expect(JSON.stringify(done)).not.to.match(/micro_?usd|prompt_tokens|completion_tokens/i);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("forces a verdict on a tie the chair cannot break (the buyer's option order), and when every panelist abstains", async () => {
    const options = ["approve", "reject", "defer"];
    llm.respond(panelResponder({ vote: (t) => ({ vote: t.seat === "P2" ? "defer" : t.seat === "P3" ? "reject" : "abstain", confidence: 0.5 }) }));
    const tie = await pollResult(up.srv, await order({ task: "Approve the Q3 hiring plan?", options, panel_size: 5, rounds: 1 }));
    expect(tie.status, tie.error).to.equal("delivered");
    expect(llm.requests).to.have.length(5 * 3);
    expect(tie.deliverable).to.include({ verdict: "reject", decided_by: "buyer_order", forced: true, question: "Approve the Q3 hiring plan?" });
    expect(tie.deliverable.vote_breakdown).to.deep.include({ tie: true, tied_options: ["reject", "defer"], abstentions: 3 });
    expect(tie.deliverable.vote_breakdown.tie_break.map((s: Json) => [s.rule, s.remaining])).to.deep.equal([
      ["summed_confidence", ["reject", "defer"]],
      ["chair", ["reject", "defer"]],
      ["buyer_order", ["reject"]],
    ]);

    llm.reset();
    llm.respond(panelResponder({ vote: () => ({ vote: "abstain", confidence: 0.9 }) }));
    const silent = await pollResult(up.srv, await order({ question: "Approve the Q3 hiring plan?", options: ["defer", "approve"], panel_size: 5, rounds: 1 }));
    expect(silent.status, silent.error).to.equal("delivered");
    expect(silent.deliverable).to.include({ verdict: "defer", decided_by: "buyer_order", forced: true });
    expect(silent.deliverable.vote_breakdown).to.deep.include({ all_abstained: true, abstentions: 5 });
  });

  it("repairs a malformed answer once and says so", async () => {
    llm.script({ content: "I think we should say yes, because" });
    llm.respond(panelResponder({ vote: () => ({ vote: "yes", confidence: 0.9 }) }));
    const jobId = await order({ question: "Ship the release on Friday?", panel_size: 5, rounds: 1 });
    const done = await pollResult(up.srv, jobId);
    expect(done.status, done.error).to.equal("delivered");
    expect(llm.requests).to.have.length(5 * 3 + 1);
    expect(llm.requests.filter((r) => r.repair)).to.have.length(1);
    expect(llm.requests.find((r) => r.repair)!.lastUser).to.contain("not valid JSON");
    expect(done.deliverable.process.repaired_answers).to.equal(1);
    expect(done.deliverable.transcript.filter((t: Json) => t.repaired)).to.have.length(1);
    const usage = await usageOf(jobId);
    expect(usage.map((u) => [u.ok, u.repair]).filter(([ok]) => !ok)).to.deep.equal([[false, false]]);
    expect(usage).to.have.length(16);
  });

  it("refunds the job when a panelist's answer is still invalid after the repair request", async () => {
    const before = await up.balance();
    const valid = panelResponder({ vote: () => ({ vote: "no", confidence: 0.5 }) });
    // P3 answers its first opinion with a vote for an option that does not exist, every time.
    llm.respond((req) => (turnOf(req).seat === "P3" ? { json: { position: "maybe", summary: "Unsure.", arguments: ["-"], confidence: 0.5 } } : valid(req)));
    await expectRefundedAfterRepair(up, await order({ question: "Ship the release on Friday?", panel_size: 5, rounds: 1 }), "position", before);
    const p3 = llm.requests.filter((r) => turnOf(r).seat === "P3");
    expect(p3.map((r) => r.repair)).to.deep.equal([false, true, false, true, false, true]);
  });

  it("refuses bad input before any challenge, charges nothing and never calls the model", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "question"],
      [{ context: "no question here" }, "question"],
      [{ question: "Go" }, "question"],
      [{ question: "Go ahead?", options: ["yes"] }, "options"],
      [{ question: "Go ahead?", options: ["Yes", "yes"] }, "options"],
      [{ question: "Go ahead?", options: ["go", "Abstain"] }, "options"],
      [{ question: "Go ahead?", options: Array.from({ length: 9 }, (_, i) => `option ${i}`) }, "options"],
      [{ question: "Go ahead?", panel_size: 4 }, "panel_size"],
      [{ question: "Go ahead?", panel_size: 12 }, "panel_size"],
      [{ question: "Go ahead?", rounds: 0 }, "rounds"],
      [{ question: "Go ahead?", rounds: 4 }, "rounds"],
      [{ question: "Go ahead?", roles: ["chair", "skeptic", "finance", "security", "astrologer"] }, "roles.4"],
      [{ question: "Go ahead?", roles: ["chair", "skeptic", "finance", "security", "chair"] }, "roles"],
      [{ question: "Go ahead?", roles: ["chair", "skeptic", "finance", "security", "ethicist"], panel_size: 7 }, "panel_size"],
    ]);
    expect(llm.requests).to.deep.equal([]);
  });
});

describe("judgment panels and vendor vetting without a configured LLM", function () {
  this.timeout(60_000);

  it("are listed as unavailable and refused with 409 service_unavailable before any challenge", async () => {
    const srv = await startTestServer({});
    try {
      const bodies: Record<string, unknown> = {
        "deliberation.multi-agent-debate": { question: "Go ahead?" },
        "procurement.council": { question: "Which vendor?", options: ["A", "B"] },
        "procurement.vendor-vetting": { vendor: { name: "Acme" }, details: "Founded 2001." },
      };
      for (const [sku, body] of Object.entries(bodies)) {
        const entry = await expectUnavailableWithoutLlm(srv, sku, body);
        expect(entry, sku).not.to.have.property("x-input-schema");
      }
    } finally {
      await srv.close();
    }
  });
});

import { expect } from "chai";
import { createHash } from "node:crypto";
import type { LlmEngine, StructuredAnswer, StructuredRequest } from "../../../src/llm/llm-engine.js";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { deliberate } from "../../../src/panels/deliberation.js";
import { composePanel, COUNCIL_ROLE_ORDER, DEBATE_ROLE_ORDER } from "../../../src/panels/roles.js";

// A model stand-in: each panelist answers in its own words (a marker naming its seat), so what each
// prompt shows of the others can be checked.
function fakeLlm(answer: (req: StructuredRequest<unknown>, seat: string) => Record<string, unknown>) {
  const seen: StructuredRequest<unknown>[] = [];
  const llm: LlmEngine = {
    modelFor: () => "fake-model",
    async complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
      seen.push(req as StructuredRequest<unknown>);
      const seat = /You are panelist (P\d+)/.exec(req.messages[0]!.content)![1]!;
      const value = req.schema.parse(answer(req as StructuredRequest<unknown>, seat));
      return { value, model: "fake-model", usage: { promptTokens: 1, completionTokens: 1, costMicroUsd: 0n }, repaired: false };
    },
  };
  return { llm, seen };
}

const brief = (rounds: number, panelSize: number) => ({ question: "Should we migrate the billing service to the new database?", options: ["yes", "no"], context: undefined, setting: "a question", panelSize, rounds });

describe("panels: the deliberation process", () => {
  it("asks every panelist once per phase (opinion, each rebuttal round, vote); first opinions see no other panelist's words", async () => {
    const { llm, seen } = fakeLlm((req, seat) => {
      if (req.schemaName === "panel_first_opinion") return { position: seat === "P1" ? "no" : "yes", summary: `opinion-of-${seat}`, arguments: [`argument-of-${seat}`], confidence: 0.6 };
      if (req.schemaName === "panel_rebuttal") return { position: "yes", rebuttal: `rebuttal-of-${seat}`, changed_position: seat === "P1", confidence: 0.7 };
      return { vote: seat === "P7" ? "abstain" : "yes", confidence: 0.8, rationale: `rationale-of-${seat}` };
    });
    const panel = composePanel(DEBATE_ROLE_ORDER, 7);
    const d = await deliberate({ llm, family: "deliberation", accountTo: "pay_1", brief: brief(2, 7), panel });

    expect(seen.length).to.equal(7 * (1 + 2 + 1));
    expect(d.completions).to.equal(28);
    expect(seen.every((r) => r.family === "deliberation" && r.accountTo === "pay_1")).to.equal(true);
    const text = (r: StructuredRequest<unknown>) => r.messages.map((m) => m.content).join("\n");
    const opinions = seen.filter((r) => r.schemaName === "panel_first_opinion");
    expect(opinions).to.have.length(7);
    for (const r of opinions) expect(text(r)).not.to.match(/opinion-of-|argument-of-|rebuttal-of-/);

    // Round 1 shows the others' first opinions, round 2 their round-1 rebuttals; the vote shows all finals.
    const round1 = d.transcript.filter((t) => t.phase === "rebuttal" && t.round === 1);
    for (const t of round1) {
      const prompt = t.messages.map((m) => m.content).join("\n");
      for (const p of panel) expect(prompt).to.contain(`opinion-of-${p.id}`);
      expect(prompt).not.to.contain("rebuttal-of-");
    }
    const round2 = d.transcript.filter((t) => t.phase === "rebuttal" && t.round === 2);
    for (const t of round2) for (const p of panel) expect(t.messages[1]!.content).to.contain(`rebuttal-of-${p.id}`);
    const votes = d.transcript.filter((t) => t.phase === "vote");
    expect(votes.map((t) => t.panelist)).to.deep.equal(panel.map((p) => p.id));

    expect(d.tally).to.deep.include({ verdict: "yes", decided_by: "plurality", abstentions: 1, abstained_by: ["P7"] });
    expect(d.transcript.map((t) => t.seq)).to.deep.equal(Array.from({ length: 28 }, (_, i) => i + 1));
    expect(d.transcriptSha256).to.equal(createHash("sha256").update(canonicalJson(d.transcript)).digest("hex"));
  });

  it("seats the first N roles of the SKU's order (the chair first) or the buyer's roles, and refuses a bad panel", () => {
    expect(composePanel(COUNCIL_ROLE_ORDER, 5).map((p) => `${p.id}:${p.role.id}`)).to.deep.equal(["P1:chair", "P2:finance", "P3:legal_compliance", "P4:risk_officer", "P5:operations"]);
    expect(composePanel(DEBATE_ROLE_ORDER, 11).map((p) => p.role.id)).to.have.members([...DEBATE_ROLE_ORDER]);
    expect(composePanel(DEBATE_ROLE_ORDER, 7, ["ethicist", "security", "finance", "skeptic", "contrarian"]).map((p) => p.role.id)).to.deep.equal(["ethicist", "security", "finance", "skeptic", "contrarian"]);
    expect(() => composePanel(DEBATE_ROLE_ORDER, 4)).to.throw(RangeError);
    expect(() => composePanel(DEBATE_ROLE_ORDER, 12)).to.throw(RangeError);
    expect(() => composePanel(DEBATE_ROLE_ORDER, 5, ["chair", "chair", "finance", "skeptic", "security"])).to.throw(/distinct/);
  });

  it("a model failure fails the deliberation", async () => {
    const llm: LlmEngine = { modelFor: () => "m", complete: async () => Promise.reject(new Error("no valid answer after one repair")) };
    let failed: unknown;
    await deliberate({ llm, family: "deliberation", accountTo: "pay_2", brief: brief(1, 5), panel: composePanel(DEBATE_ROLE_ORDER, 5) }).catch((e) => (failed = e));
    expect(String(failed)).to.contain("no valid answer");
  });
});

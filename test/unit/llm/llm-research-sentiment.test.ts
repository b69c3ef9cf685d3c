import { expect } from "chai";
import { z } from "zod";
import type { LlmEngine, StructuredAnswer, StructuredRequest } from "../../../src/llm/llm-engine.js";
import { passagesOf } from "../../../src/research/passages.js";
import { LLM_MAX_PASSAGES, passagesForModel, writeBrief } from "../../../src/research/llm-brief.js";
import { passageRefs, type BriefSource } from "../../../src/research/brief.js";
import { terms } from "../../../src/research/terms.js";
import { BATCH_CHARS, BATCH_ITEMS, batchesOf, llmSentimentEngine } from "../../../src/sentiment/llm-sentiment.js";
import { Semaphore } from "../../../src/llm/semaphore.js";

/** An LlmEngine answering from a function of the request (the schema still validates the answer). */
function fakeLlm(answer: (req: StructuredRequest<unknown>) => unknown): LlmEngine & { calls: StructuredRequest<unknown>[] } {
  const calls: StructuredRequest<unknown>[] = [];
  return {
    calls,
    modelFor: () => "fake-model",
    async complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
      calls.push(req as StructuredRequest<unknown>);
      const value = (req.schema as z.ZodType<T>).parse(answer(req as StructuredRequest<unknown>));
      return { value, model: "fake-model", usage: { promptTokens: 1, completionTokens: 1, costMicroUsd: 0n }, repaired: false };
    },
  };
}

const source = (n: number, paragraphs: string[]): BriefSource => ({ source: n, url: `https://s${n}.example/`, title: `Source ${n}`, content: passagesOf(paragraphs.map((p) => `<p>${p}</p>`).join("")) });

describe("llm engines of research and sentiment", () => {
  it("gives the model each question's best passages in turn, within the passage cap, in document order", () => {
    const many = source(1, Array.from({ length: 60 }, (_, i) => `Settlement fact number ${i} about nonces and payments.`));
    const other = source(2, ["Glaciers retreat in the Alps.", "Refunds are ordinary transfers recorded in the ledger."]);
    const refs = passageRefs([many, other]);
    const given = passagesForModel(refs, [terms("settlement nonces"), terms("refunds ledger")]);
    expect(given.length).to.equal(LLM_MAX_PASSAGES);
    expect(given.some((r) => r.passage.text.startsWith("Refunds"))).to.equal(true);
    expect(given.some((r) => r.passage.text.startsWith("Glaciers"))).to.equal(false);
    const order = given.map((r) => refs.indexOf(r));
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
  });

  it("writes gaps without asking the model when no passage shares a term with the task", async () => {
    const llm = fakeLlm(() => ({ claims: [] }));
    const out = await writeBrief(llm, "What is the boiling point of water?", [source(1, ["Payments settle once."])], { maxClaims: 5, accountTo: "pay_x" });
    expect(llm.calls).to.have.length(0);
    expect(out.asked).to.equal(false);
    expect(out.brief.claims.map((c) => [c.kind, c.status])).to.deep.equal([["gap", "unverified"]]);
  });

  it("cites only the named passages that support a written claim, and drops duplicate claims", async () => {
    const src = source(1, ["Each payment authorization carries a random 32-byte nonce.", "The contract refuses a used nonce, so a payment settles exactly once."]);
    const llm = fakeLlm(() => ({
      claims: [
        { question: 1, text: "The contract refuses a used nonce, so a payment settles exactly once.", passages: [1, 2] },
        { question: 1, text: "the contract refuses a used nonce, so a payment settles exactly once.", passages: [2] },
      ],
    }));
    const out = await writeBrief(llm, "How does a payment settle exactly once?", [src], { maxClaims: 5, accountTo: "pay_x" });
    expect(llm.calls[0]!.accountTo).to.equal("pay_x");
    expect(llm.calls[0]!.family).to.equal("research");
    const written = out.brief.claims.filter((c) => c.kind === "written");
    expect(written).to.have.length(1);
    expect(written[0]!.citations).to.deep.equal([1]);
    expect(out.brief.citations[0]!.passage_index).to.equal(1);
  });

  it("batches sentiment texts by count and characters, and maps ratings back in order", async () => {
    expect(batchesOf(Array.from({ length: 45 }, () => "x")).map((b) => b.length)).to.deep.equal([BATCH_ITEMS, BATCH_ITEMS, 5]);
    expect(batchesOf(["a".repeat(BATCH_CHARS - 10), "b".repeat(20), "c"]).map((b) => b.length)).to.deep.equal([1, 2]);
    const llm = fakeLlm((req) => {
      const n = (req.messages[1]!.content.match(/^\[\d+\]$/gm) ?? []).length;
      return { items: Array.from({ length: n }, (_, i) => ({ n: n - i, label: n - i >= 5 ? "negative" : "neutral", score: -(n - i) / 100 })) };
    });
    const run = await llmSentimentEngine(llm, "oracle").score(Array.from({ length: 25 }, (_, i) => `text ${i}`), { accountTo: "pay_y" });
    expect(llm.calls).to.have.length(2);
    expect(llm.calls[0]!.family).to.equal("oracle");
    expect(run.scores.map((s) => s.normalized_score)).to.deep.equal([...Array.from({ length: 20 }, (_, i) => -(i + 1) / 100), ...Array.from({ length: 5 }, (_, i) => -(i + 1) / 100)]);
    expect(run.scores[0]!.label).to.equal("neutral");
    expect(run.scores[5]!.label).to.equal("negative");
    expect(run.ai).to.deep.include({ model: "fake-model", repaired: false });
  });

  it("the semaphore admits at most its limit and hands permits on in order", async () => {
    const sem = new Semaphore(2);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        sem.use(async () => {
          active++;
          peak = Math.max(peak, active);
          order.push(i);
          await new Promise((r) => setTimeout(r, 5));
          active--;
        }),
      ),
    );
    expect(peak).to.equal(2);
    expect(order).to.deep.equal([0, 1, 2, 3, 4, 5]);
  });
});

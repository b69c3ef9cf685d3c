import { expect } from "chai";
import { z } from "zod";
import { Bm25Index } from "../../../src/research/bm25.js";
import { composeBrief, questionsOf, type BriefSource } from "../../../src/research/brief.js";
import { passagesOf } from "../../../src/research/passages.js";
import { checkSupport } from "../../../src/research/support.js";
import { numbersOf, stem, terms } from "../../../src/research/terms.js";
import { readMainContent } from "../../../src/web/main-content.js";
import { ResearchBriefOutput } from "../../../src/skus/research-topic-deep-researcher.js";
import { NONCE_ARTICLE, SETTLEMENT_ARTICLE } from "../../fixtures/web/research-pages.js";

function source(n: number, html: string): BriefSource {
  const article = readMainContent(html)!;
  return { source: n, url: `https://source${n}.example/`, title: article.title, content: passagesOf(article.html) };
}

describe("research: terms, BM25 ranking, passages and the support check", () => {
  it("terms drop stop words and meet inflections through the stemmer; numbers keep their digits", () => {
    expect(terms("The payments settled, and the payment settles!")).to.deep.equal(["payment", "settl", "payment", "settl"]);
    expect(stem("settling")).to.equal(stem("settled"));
    expect(stem("authorizations")).to.equal(stem("authorization"));
    expect(terms("x402 costs 1,250.5 USDC")).to.deep.equal(["x402", "cost", "1250.5", "usdc"]);
    expect(numbersOf("about 2 seconds, 1,000 calls and 3.5%")).to.deep.equal(["2", "1000", "3.5"]);
  });

  it("BM25 ranks the document that matches more (and rarer) query terms first, and skips documents with no match", () => {
    const docs = [terms("a nonce makes each payment settle once"), terms("the weather is sunny"), terms("payment fees are deducted from the payout"), terms("nonce nonce replay protection for payment")];
    const index = new Bm25Index(docs);
    const hits = index.rank(terms("payment nonce"));
    expect(hits.map((h) => h.index)).to.deep.equal([3, 0, 2]);
    expect(hits[0]!.matched).to.have.members(terms("payment nonce"));
    expect(index.idf(stem("nonce"))).to.be.greaterThan(index.idf(stem("payment")));
  });

  it("cuts the main content into passages whose offsets point into the extracted text, with their sections", () => {
    const { text, passages } = passagesOf(readMainContent(SETTLEMENT_ARTICLE)!.html);
    expect(passages.length).to.be.greaterThan(2);
    for (const p of passages) {
      expect(text.slice(p.start, p.end)).to.equal(p.text);
      for (const s of p.sentences) expect(text.slice(s.start, s.end)).to.equal(s.text);
    }
    const refunds = passages.find((p) => p.text.startsWith("When an asynchronous job fails"))!;
    expect(refunds.section).to.equal("Refunds");
    expect(passages.some((p) => p.text.includes("Newsletter") || p.text.includes("Subscribe"))).to.equal(false);
  });

  it("a long block is split at sentence boundaries into passages of at most 700 characters", () => {
    const long = `<p>${Array.from({ length: 30 }, (_, i) => `Sentence number ${i} talks about payments settling on chain.`).join(" ")}</p>`;
    const { passages } = passagesOf(long);
    expect(passages.length).to.be.greaterThan(1);
    for (const p of passages) expect(p.text.length).to.be.at.most(700);
    expect(passages.flatMap((p) => p.sentences)).to.have.length(30);
  });

  it("support: verbatim quotes are supported; paraphrases need 60% of the terms and every number", () => {
    const passage = "Settlement on Base typically confirms in about 2 seconds. Sellers settle after delivery.";
    expect(checkSupport("Settlement on Base typically confirms in about 2 seconds.", passage)).to.deep.include({ supported: true, verbatim: true });
    expect(checkSupport("On Base, settlement confirms in roughly 2 seconds.", passage)).to.deep.include({ supported: true, verbatim: false });
    const wrongNumber = checkSupport("Settlement on Base confirms in about 12 seconds.", passage);
    expect(wrongNumber).to.deep.include({ supported: false, missing_numbers: ["12"] });
    expect(wrongNumber.coverage).to.be.at.least(0.6);
    expect(checkSupport("The moon is made of cheese.", passage)).to.deep.include({ supported: false, coverage: 0 });
  });

  it("splits a task into its questions", () => {
    expect(questionsOf("How do payments settle? What do they cost; who pays gas").map((q) => q.text)).to.deep.equal(["How do payments settle?", "What do they cost", "who pays gas"]);
    expect(questionsOf("x402 settlement")[0]!.terms).to.deep.equal(["x402", "settlement"]);
  });
});

describe("research: the extractive brief", () => {
  const sources = [source(1, SETTLEMENT_ARTICLE), source(2, NONCE_ARTICLE)];
  const brief = composeBrief("How do x402 payments settle exactly once? What does settlement cost in gas fees on Ethereum mainnet?", sources, {
    maxClaims: 6,
    checkClaims: ["Settlement on Base confirms in about 2 seconds.", "Settlement on Base confirms in about 12 seconds.", "The moon is made of cheese."],
  });

  it("every supported claim cites passages by number, and the first cited passage contains the claim verbatim", () => {
    const extracted = brief.claims.filter((c) => c.kind === "extracted");
    expect(extracted.length).to.be.within(1, 6);
    for (const c of extracted) {
      expect(c.status).to.equal("supported");
      expect(c.citations.length).to.be.at.least(1);
      const first = brief.citations.find((x) => x.n === c.citations[0])!;
      expect(first.text).to.contain(c.text);
      expect(c.support).to.deep.include({ supported: true, verbatim: true });
    }
    // Citations are numbered 1..n in order of first use.
    expect(brief.citations.map((c) => c.n)).to.deep.equal(brief.citations.map((_, i) => i + 1));
  });

  it("the best claims answer the question, and a claim found in both sources cites both", () => {
    const first = brief.claims.filter((c) => c.question === 0);
    expect(first.some((c) => /settles exactly once/.test(c.text))).to.equal(true);
    const corroborated = brief.claims.find((c) => c.citations.length > 1)!;
    expect(corroborated, "a corroborated claim").to.exist;
    const citedSources = corroborated.citations.map((n) => brief.citations.find((c) => c.n === n)!.source);
    expect(new Set(citedSources).size).to.equal(citedSources.length);
  });

  it("a question no source addresses becomes an unverified gap, and its terms are reported as uncovered", () => {
    const gap = brief.claims.find((c) => c.kind === "gap")!;
    expect(gap).to.deep.include({ question: 1, status: "unverified", citations: [] });
    expect(brief.questions[1]!.covered).to.equal(false);
    expect(brief.uncovered_terms).to.include.members(["ethereum", "mainnet"]);
  });

  it("statements the buyer asks to check are supported with a citation or marked unverified", () => {
    const checked = brief.claims.filter((c) => c.kind === "checked");
    expect(checked.map((c) => c.status)).to.deep.equal(["supported", "unverified", "unverified"]);
    expect(brief.citations.find((c) => c.n === checked[0]!.citations[0])!.text).to.contain("about 2 seconds");
    expect(checked[1]!.support!.missing_numbers).to.deep.equal(["12"]);
    expect(checked[1]!.citations).to.deep.equal([]);
  });

  it("keeps within max_claims and skips near-duplicate sentences", () => {
    const small = composeBrief("payment nonce settles exactly once", sources, { maxClaims: 2 });
    expect(small.claims.filter((c) => c.kind === "extracted")).to.have.length(2);
    const texts = small.claims.map((c) => c.text);
    expect(new Set(texts).size).to.equal(texts.length);
  });

  it("the output schema converts to JSON Schema for the catalog", () => {
    const schema = z.toJSONSchema(ResearchBriefOutput) as { properties: Record<string, unknown> };
    expect(schema.properties).to.include.keys("content_markdown", "claims", "citations", "sources");
  });
});

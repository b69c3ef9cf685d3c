import { expect } from "chai";
import http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { llmServerForSuite, TEST_LLM_MODEL, type ScriptedAnswer, type SeenRequest } from "../../fixtures/llm-server.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { pollResult, pollUntil } from "../../fixtures/results.js";
import { expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";
import { INJECTED_ARTICLE, NONCE_ARTICLE, SETTLEMENT_ARTICLE } from "../../fixtures/web/research-pages.js";
import { labelOf } from "../../../src/sentiment/lexicon-sentiment.js";
import { ResearchBriefOutput } from "../../../src/skus/research-topic-deep-researcher.js";
import { SentimentAnalysisOutput } from "../../../src/skus/oracle-sentiment-analysis.js";
import { TopicSentimentOutput } from "../../../src/skus/research-topic-sentiment-analyzer.js";

// The research and sentiment SKUs with a language model configured: the researcher's claims are
// written by the model from numbered passages and each is held to the support check; the sentiment
// engines label every item by the model. The scripted model answers from what the prompt holds.

const news = newsServer();
const site: http.RequestListener = (req, res) => {
  if (req.url!.startsWith("/feeds/")) return news.handler(req, res);
  const page = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  if (req.url === "/settle") return page(SETTLEMENT_ARTICLE);
  if (req.url === "/eip-3009") return page(NONCE_ARTICLE);
  if (req.url === "/faq") return page(INJECTED_ARTICLE);
  res.writeHead(404).end("not found");
};

/** The numbered passages of a research prompt. */
function passagesIn(req: SeenRequest): { n: number; source: number; text: string }[] {
  return [...req.firstUser.matchAll(/^\[(\d+)\] \(source (\d+)[^)\n]*\)\n(.+)$/gm)].map((m) => ({ n: Number(m[1]), source: Number(m[2]), text: m[3]! }));
}

/** The numbered texts of a sentiment prompt. */
function textsIn(req: SeenRequest): { n: number; text: string }[] {
  return req.firstUser.split(/\n\n(?=\[\d+\]\n)/).map((block) => {
    const m = /^\[(\d+)\]\n([\s\S]*)$/.exec(block)!;
    return { n: Number(m[1]), text: m[2]! };
  });
}

/** A model that rates by keywords, and cites one phrase of the text and one it made up. */
const rater = (req: SeenRequest): ScriptedAnswer => ({
  json: {
    items: textsIn(req).map(({ n, text }) => {
      const score = /surge|wins|love/i.test(text) ? 0.6 : /hacked|crash|worry|awful/i.test(text) ? -0.7 : 0;
      const word = /surge|wins|love|hacked|crash|worry|awful/i.exec(text)?.[0];
      return { n, label: labelOf(score), score, evidence: word ? [word, "a phrase the text never says"] : [] };
    }),
  },
});

describe("research and sentiment SKUs with a configured language model", function () {
  this.timeout(120_000);
  const llm = llmServerForSuite();
  const up = upstreamForSuite(site, (base) => ({ ...llm.env(base), NEWS_FEEDS_FILE: news.setUp(base), BREAKER_FAILURE_THRESHOLD: "1000", LLM_MAX_RETRIES: "0" }));

  beforeEach(() => llm.reset());

  describe("research.topic-deep-researcher (engine llm)", () => {
    const order = async (body: unknown) => {
      const res = await up.pay("research.topic-deep-researcher", body);
      expect(res.status, await res.clone().text()).to.equal(200);
      return ((await res.json()) as Json).job_id as string;
    };

    it("the model writes claims citing numbered passages; each is checked, an unsupported one is unverified without citations", async () => {
      const before = await up.balance();
      let given: { n: number; source: number; text: string }[] = [];
      llm.respond((req) => {
        given = passagesIn(req);
        const nonce = given.find((p) => p.text.includes("refuses a nonce that was already used"))!;
        const base = given.find((p) => p.text.includes("about 2 seconds"))!;
        return {
          json: {
            claims: [
              { question: 1, text: "The USDC contract refuses a nonce that was already used, so a payment settles exactly once.", passages: [nonce.n] },
              { question: 1, text: "Settlement on Base confirms in about 12 seconds.", passages: [base.n] },
            ],
          },
        };
      });
      const jobId = await order({
        task: "How do x402 payments settle exactly once?",
        urls: [`${up.base}/settle`, `${up.base}/eip-3009`, `${up.base}/faq`],
        claims: ["Settlement on Base confirms in about 2 seconds."],
      });
      const done = await pollResult(up.srv, jobId);
      expect(done.status).to.equal("delivered");
      const d = done.deliverable;
      expect(() => ResearchBriefOutput.parse(d)).not.to.throw();
      expect(done.powered_by).to.equal(`svc-research/llm (${TEST_LLM_MODEL})`);
      expect(d.engine).to.equal("llm");
      expect(d.ai_generation).to.deep.include({ ai_generated: true, engine: "llm", model: TEST_LLM_MODEL, repaired: false });
      expect(d.method.passages_given).to.equal(given.length);

      // The model saw passages of the used sources only (the injected page was excluded), by number.
      const seen = llm.requests[0]!;
      expect(seen.schemaName).to.equal("research_claims");
      expect(given.map((p) => p.source).every((s) => s === 1 || s === 2)).to.equal(true);
      expect(seen.firstUser).not.to.contain("Ignore all previous instructions").and.not.to.contain("Fees are deducted");

      const [written, wrong] = d.claims.filter((c: Json) => c.kind === "written");
      expect(written).to.deep.include({ status: "supported", question: 0 });
      // Its citation is the passage the model named, and the support check passed on it.
      const cite = d.citations.find((c: Json) => c.n === written.citations[0]);
      expect(cite.text).to.contain("refuses a nonce that was already used");
      expect(written.support.supported).to.equal(true);
      // The model's wrong number is not in its cited passage: unverified, no citation.
      expect(wrong).to.deep.include({ status: "unverified", text: "Settlement on Base confirms in about 12 seconds." });
      expect(wrong.citations).to.deep.equal([]);
      expect(wrong.support.missing_numbers).to.deep.equal(["12"]);
      // The buyer's statement is checked as always.
      expect(d.claims.find((c: Json) => c.kind === "checked")).to.deep.include({ status: "supported" });
      expect(d.content_markdown).to.contain(`Brief written by a language model (${TEST_LLM_MODEL})`);
      expect(d.content_markdown).to.contain("**Unverified:** Settlement on Base confirms in about 12 seconds.");
      expect(d.sources.map((s: Json) => s.status)).to.deep.equal(["used", "used", "excluded"]);
      expect(await up.balance()).to.equal(before - 50_000n);
    });

    it("repairs a claim citing a passage number that was never given", async () => {
      llm.script((req) => ({ json: { claims: [{ question: 1, text: "A payment settles exactly once.", passages: [passagesIn(req).length + 5] }] } }));
      llm.script((req) => ({ json: { claims: [{ question: 1, text: "The USDC contract refuses a nonce that was already used, so a payment settles exactly once.", passages: [passagesIn(req).find((p) => p.text.includes("already used"))!.n] }] } }));
      const done = await pollResult(up.srv, await order({ task: "How does a payment settle exactly once?", urls: [`${up.base}/eip-3009`] }));
      expect(done.status).to.equal("delivered");
      expect(done.deliverable.ai_generation.repaired).to.equal(true);
      expect(done.deliverable.claims[0]).to.deep.include({ kind: "written", status: "supported" });
      expect(llm.requests[1]!.repair).to.equal(true);
      expect(llm.requests[1]!.lastUser).to.contain("claims.0.passages.0");
    });

    it("fails and refunds the job when the model gives no valid answer, with no extractive stand-in", async () => {
      const before = await up.balance();
      llm.respond(() => ({ content: "I cannot help with that." }));
      const failed = await pollUntil(up.srv, await order({ task: "How does a payment settle exactly once?", urls: [`${up.base}/eip-3009`] }), ["refunded"]);
      expect(failed.error).to.contain("research_claims");
      expect(llm.requests).to.have.length(6);
      expect(await up.balance()).to.equal(before);
      await expectLedgerConsistent(up.srv.ds);
    });
  });

  describe("sentiment (engine llm)", () => {
    it("research.topic-sentiment-analyzer: every story labelled by the model, aggregated per channel with the shared thresholds", async () => {
      const before = await up.balance();
      llm.respond(rater);
      const res = await up.payJson("research.topic-sentiment-analyzer", { topic: "bitcoin" });
      expect(res.status).to.equal(200);
      expect(res.body.powered_by).to.equal(`svc-sentiment/llm (${TEST_LLM_MODEL})`);
      const d = res.body.deliverable;
      expect(TopicSentimentOutput.safeParse(d).success).to.equal(true);
      expect(d.engine).to.equal("llm");
      expect(d.ai_generation).to.deep.include({ model: TEST_LLM_MODEL, engine: "llm" });
      const crypto = d.channels.find((c: Json) => c.channel === "crypto");
      expect(crypto.items.map((i: Json) => `${i.sentiment.label} ${i.sentiment.normalized_score}: ${i.title}`)).to.deep.equal([
        "positive 0.6: Bitcoin ETF inflows surge to record as investors cheer",
        "negative -0.7: Bitcoin exchange hacked; users fear losses in fraud",
        "neutral 0: Bitcoin miners publish quarterly report",
      ]);
      // Evidence the text does not contain is dropped; stories keep their source attribution.
      expect(crypto.items[0].sentiment.evidence).to.deep.equal(["surge"]);
      expect(crypto.items[0].sentiment.words).to.deep.equal([]);
      expect(crypto.items[0].source.domain).to.equal("alpha-crypto.example");
      expect(crypto.sentiment).to.deep.include({ normalized_score: -0.0333, label: "neutral", counts: { positive: 1, neutral: 1, negative: 1 } });
      expect(d.overall).to.deep.include({ count: 5, counts: { positive: 2, neutral: 1, negative: 2 } });
      // One batch for the five stories, about the topic.
      expect(llm.requests).to.have.length(1);
      expect(llm.requests[0]!.body.messages[0]!.content).to.contain("about: bitcoin");
      expect(textsIn(llm.requests[0]!)).to.have.length(5);
      expect(d.content_markdown).to.contain(`Engine: llm (${TEST_LLM_MODEL}, AI-generated labels)`);
      expect(await up.balance()).to.equal(before - 30_000n);
    });

    it("oracle.sentiment-analysis: the buyer's texts labelled by the model; a label that contradicts its score is repaired", async () => {
      llm.script({ json: { items: [{ n: 1, label: "positive", score: -0.4 }, { n: 2, label: "neutral", score: 0 }] } }, rater);
      const res = await up.payJson("oracle.sentiment-analysis", { texts: ["I love this product", "The meeting is on Tuesday."] });
      expect(res.status).to.equal(200);
      const d = res.body.deliverable;
      expect(SentimentAnalysisOutput.safeParse(d).success).to.equal(true);
      expect(d.engine).to.equal("llm");
      expect(d.text.texts.map((t: Json) => [t.index, t.label, t.normalized_score])).to.deep.equal([[0, "positive", 0.6], [1, "neutral", 0]]);
      expect(d.overall).to.deep.equal({ normalized_score: 0.3, label: "positive", basis: "text" });
      expect(d.ai_generation.repaired).to.equal(true);
      expect(llm.requests[1]!.lastUser).to.contain("items.0.label: score -0.4 means label negative");
    });

    it("fails uncharged (503) when the model is down: no lexicon or canned stand-in", async () => {
      llm.respond(() => ({ status: 503, message: "model loading" }));
      await expectFailuresUncharged(up, "oracle.sentiment-analysis", [[{ text: "I love this product" }, 503]]);
      await expectFailuresUncharged(up, "research.topic-sentiment-analyzer", [[{ topic: "bitcoin" }, 503]]);
    });
  });
});

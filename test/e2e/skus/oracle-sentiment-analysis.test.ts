import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { newsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { analyzeText } from "../../../src/sentiment/lexicon-sentiment.js";
import { SentimentAnalysisOutput } from "../../../src/skus/oracle-sentiment-analysis.js";

const SKU = "oracle.sentiment-analysis";
const PRICE = 60_000n; // 0.06 USDC

describe("oracle.sentiment-analysis: sentiment of the buyer's text and/or of an asset or topic in the news", function () {
  this.timeout(60_000);
  const news = newsServer();
  const up = newsForSuite(news);
  const pay = (body: unknown) => up.payJson(SKU, body);
  const feedHits = () => [...news.hits.entries()].filter(([p]) => p.startsWith("/feeds/")).reduce((s, [, n]) => s + n, 0);

  it("scores the buyer's texts alone without reading any feed", async () => {
    const before = await up.balance();
    const hits = feedHits();
    const res = await pay({ texts: ["I love this great product", "This is not good at all", "The meeting is on Tuesday."] });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(SentimentAnalysisOutput.safeParse(d).success).to.equal(true);
    expect(d.news).to.equal(null);
    expect(d.subject).to.deep.equal({ asset: null, topic: null, texts: 3 });
    expect(d.text.texts.map((t: Json) => [t.index, t.label, t.words.map((w: Json) => `${w.word}${w.negated ? " (negated)" : ""}`)])).to.deep.equal([
      [0, "positive", ["love", "great"]],
      [1, "negative", ["good (negated)"]],
      [2, "neutral", []],
    ]);
    expect(d.text.sentiment).to.deep.equal({ normalized_score: 0, label: "neutral", count: 3, counts: { positive: 1, neutral: 1, negative: 1 } });
    expect(d.overall).to.deep.equal({ normalized_score: 0, label: "neutral", basis: "text" });
    expect(feedHits()).to.equal(hits);
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("an asset: the stories naming it (name or ticker) from the feeds, scored, combined with the buyer's text", async () => {
    const before = await up.balance();
    const res = await pay({ asset: "btc", text: "Bitcoin adoption keeps growing, a great sign" });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(d.subject).to.deep.equal({ asset: "BTC", topic: "bitcoin OR BTC", texts: 1 });
    expect(d.news.query.alternatives).to.deep.equal([["bitcoin"], ["btc"]]);
    expect(d.news.items.map((i: Json) => `${i.sentiment.label}: ${i.title} [${i.source.domain}]`)).to.deep.equal([
      "positive: Bitcoin ETF inflows surge to record as investors cheer [alpha-crypto.example]",
      "negative: Central bank warns bitcoin bubble could crash markets [gamma-markets.example]",
      "negative: Bitcoin exchange hacked; users fear losses in fraud [alpha-crypto.example]",
      "negative: BTC rally stalls as traders worry about regulation [beta-chain.example]",
      "neutral: Bitcoin miners publish quarterly report [beta-chain.example]",
      "positive: Open-source bitcoin wallet wins award [delta-tech.example]",
    ]);
    expect(d.news.sentiment).to.deep.include({ count: 6, counts: { positive: 2, neutral: 1, negative: 3 }, label: "negative" });
    expect(d.news.stats).to.deep.include({ feeds_read: 4, feeds_failed: 3, stories: 6 });
    expect(d.news.feeds.failed.map((f: Json) => f.error)).to.deep.equal(["HTTP 500", d.news.feeds.failed[1].error, "rate limited (HTTP 429, retry after 60)"]);
    expect(d.news.feeds.failed[1].error).to.match(/^malformed XML/);
    const text = analyzeText("Bitcoin adoption keeps growing, a great sign");
    expect(d.text.sentiment.normalized_score).to.equal(text.normalized_score);
    const combined = Math.round(((text.normalized_score + d.news.sentiment.normalized_score) / 2) * 10_000) / 10_000;
    expect(d.overall).to.deep.equal({ normalized_score: combined, label: combined >= 0.05 ? "positive" : combined <= -0.05 ? "negative" : "neutral", basis: "text_and_news" });
    expect(await up.balance()).to.equal(before - PRICE);
  });

  it("an asset and a topic must both match; a bare task is the topic", async () => {
    const both = await pay({ asset: "BTC", topic: "ETF" });
    expect(both.body.deliverable.news.query.alternatives).to.deep.equal([["bitcoin", "etf"], ["btc", "etf"]]);
    expect(both.body.deliverable.news.items.map((i: Json) => i.title)).to.deep.equal(["Bitcoin ETF inflows surge to record as investors cheer"]);
    expect(both.body.deliverable.overall).to.deep.include({ label: "positive", basis: "news" });
    const task = await pay({ task: "sentiment on the central bank" });
    expect(task.body.deliverable.subject.topic).to.equal("sentiment on the central bank");
    expect(task.body.deliverable.news.items.map((i: Json) => i.title)).to.deep.equal(["Central bank warns bitcoin bubble could crash markets"]);
    expect(task.body.deliverable.overall.label).to.equal("negative");
  });

  it("charges nothing when a news-only request finds no story (409 no_coverage) or every feed fails (503)", async () => {
    await expectFailuresUncharged(up, SKU, [
      [{ asset: "DOGE" }, 409, "no_coverage"],
      [{ topic: "bitcoin", channels: ["general"] }, 503],
    ]);
  });

  it("refuses bad input before any challenge and charges nothing (400 naming the field)", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "text"],
      [{ asset: "B" }, "asset"],
      [{ asset: "BTC-USD" }, "asset"],
      [{ texts: [] }, "texts"],
      [{ text: "" }, "text"],
      [{ text: "x".repeat(20_001) }, "text"],
      [{ topic: "the and" }, "topic"],
      [{ asset: "BTC", channels: ["sports"] }, "channels.0"],
    ]);
  });
});

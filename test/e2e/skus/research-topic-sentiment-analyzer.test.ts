import { expect } from "chai";
import { createHash } from "node:crypto";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { newsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { analyzeText, labelOf } from "../../../src/sentiment/lexicon-sentiment.js";
import { TopicSentimentOutput } from "../../../src/skus/research-topic-sentiment-analyzer.js";

const SKU = "research.topic-sentiment-analyzer";
const PRICE = 30_000n; // 0.03 USDC
const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10_000) / 10_000;

describe("research.topic-sentiment-analyzer: a topic's sentiment per channel, with the stories behind each score", function () {
  this.timeout(60_000);
  const up = newsForSuite(newsServer());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("scores every story by the lexicon and aggregates per channel (a story counts in each channel that carried it)", async () => {
    const before = await up.balance();
    const res = await pay({ topic: "bitcoin" });
    expect(res.status).to.equal(200);
    expect(res.body.powered_by).to.equal("svc-sentiment/lexicon");
    const d = res.body.deliverable;
    expect(TopicSentimentOutput.safeParse(d).success).to.equal(true);
    expect(d.engine).to.equal("lexicon:wink-sentiment (AFINN-165)");
    expect(d.thresholds).to.deep.equal({ positive_at_or_above: 0.05, negative_at_or_below: -0.05 });

    const ch = Object.fromEntries(d.channels.map((c: Json) => [c.channel, c]));
    expect(d.channels.map((c: Json) => c.channel)).to.deep.equal(["general", "business", "tech", "crypto"]);
    const titles = (c: Json) => c.items.map((i: Json) => `${i.sentiment.label}: ${i.title}`);
    expect(titles(ch.crypto)).to.deep.equal([
      "positive: Bitcoin ETF inflows surge to record as investors cheer",
      "negative: Bitcoin exchange hacked; users fear losses in fraud",
      "neutral: Bitcoin miners publish quarterly report",
    ]);
    expect(titles(ch.business)).to.deep.equal(["positive: Bitcoin ETF inflows surge to record as investors cheer", "negative: Central bank warns bitcoin bubble could crash markets"]);
    expect(titles(ch.tech)).to.deep.equal(["positive: Open-source bitcoin wallet wins award"]);
    expect(ch.general).to.deep.include({ item_count: 0, feeds_read: 0, feeds_failed: 2, items: [] });
    expect(ch.general.sentiment).to.deep.equal({ normalized_score: null, label: null, count: 0, counts: { positive: 0, neutral: 0, negative: 0 } });
    expect(ch.business).to.deep.include({ item_count: 2, feeds_read: 1, feeds_failed: 1 });
    expect(ch.crypto).to.deep.include({ item_count: 3, feeds_read: 2, feeds_failed: 0 });

    // Scores are the lexicon's, on "title. summary"; channel scores are their means.
    const hacked = ch.crypto.items[1];
    expect(hacked.sentiment).to.deep.equal(analyzeText("Bitcoin exchange hacked; users fear losses in fraud. The breach is a disaster for customers, who are angry."));
    expect(hacked.sentiment.words.map((w: Json) => w.word)).to.deep.equal(["hacked", "fear", "losses", "fraud", "breach", "disaster", "angry"]);
    expect(ch.crypto.items[0].also_reported_by).to.deep.equal(["beta-chain.example", "gamma-markets.example"]);
    for (const c of [ch.crypto, ch.business, ch.tech]) {
      const m = mean(c.items.map((i: Json) => i.sentiment.normalized_score));
      expect(c.sentiment.normalized_score).to.equal(m);
      expect(c.sentiment.label).to.equal(labelOf(m));
    }
    expect(ch.crypto.sentiment).to.deep.include({ label: "negative", count: 3, counts: { positive: 1, neutral: 1, negative: 1 } });
    expect(ch.business.sentiment).to.deep.include({ label: "negative", count: 2, counts: { positive: 1, neutral: 0, negative: 1 } });
    expect(ch.tech.sentiment).to.deep.include({ label: "positive", count: 1 });
    // Overall: each of the 5 stories once.
    expect(d.overall).to.deep.include({ label: "neutral", count: 5, counts: { positive: 2, neutral: 1, negative: 2 } });
    expect(d.stats).to.deep.equal({ feeds_read: 4, feeds_failed: 3, items_read: 12, items_matched: 8, duplicates_merged: 3, stories: 5 });
    expect(d.feeds.failed.map((f: Json) => f.domain)).to.deep.equal(["down-news.example", "broken-times.example", "busy-wire.example"]);
    expect(d.excluded.map((e: Json) => e.title)).to.deep.equal(["Bitcoin price update"]);
    expect(d.content_markdown).to.contain("| crypto | 3 |");
    expect(d.content_markdown).to.contain("| general | 0 | n/a | no data | 0/0/0 |");
    expect(res.body.svc_trust.content_sha256).to.equal(createHash("sha256").update(d.content_markdown, "utf8").digest("hex"));
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("restricts to the channels asked for", async () => {
    const res = await pay({ topic: "bitcoin", channels: ["tech", "business"] });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(d.channels.map((c: Json) => [c.channel, c.item_count])).to.deep.equal([["tech", 1], ["business", 2]]);
    expect(d.stats).to.deep.include({ feeds_read: 2, feeds_failed: 1, stories: 3 });
  });

  it("charges nothing when no story matches (409 no_coverage) or every feed fails (503)", async () => {
    await expectFailuresUncharged(up, SKU, [
      [{ topic: "dogecoin" }, 409, "no_coverage"],
      [{ topic: "bitcoin", channels: ["general"] }, 503],
    ]);
  });

  it("refuses bad input before any challenge and charges nothing (400 naming the field)", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "topic"],
      [{ topic: "and the" }, "topic"],
      [{ topic: "bitcoin", channels: [] }, "channels"],
      [{ topic: "bitcoin", channels: ["crypto", "weather"] }, "channels.1"],
      [{ topic: 42 }, "topic"],
    ]);
  });
});

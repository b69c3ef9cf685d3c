import { expect } from "chai";
import { createHash } from "node:crypto";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { newsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { NewsScannerOutput } from "../../../src/skus/research-topic-news-scanner.js";

const SKU = "research.topic-news-scanner";
const PRICE = 20_000n; // 0.02 USDC

// Seven outlets on loopback (RSS 2.0, Atom and RDF feeds; a 500, a malformed feed and a 429 among
// them), configured through a test feeds file; see test/fixtures/news-feeds.ts for the newsroom.

describe("research.topic-news-scanner: a topic's stories from the curated feeds, attributed and deduplicated", function () {
  this.timeout(60_000);
  const news = newsServer();
  const up = newsForSuite(news);
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("returns the matching stories newest first, duplicates merged, each attributed; failed feeds listed; charges the list price", async () => {
    const before = await up.balance();
    const res = await pay({ topic: "bitcoin" });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(NewsScannerOutput.safeParse(d).success).to.equal(true);
    expect(d.query).to.deep.equal({ topic: "bitcoin", alternatives: [["bitcoin"]] });
    expect(d.channels).to.deep.equal(["general", "business", "tech", "crypto"]);
    expect(d.items.map((i: Json) => i.title)).to.deep.equal([
      "Bitcoin ETF inflows surge to record as investors cheer",
      "Central bank warns bitcoin bubble could crash markets",
      "Bitcoin exchange hacked; users fear losses in fraud",
      "Bitcoin miners publish quarterly report",
      "Open-source bitcoin wallet wins award",
    ]);
    expect(d.stats).to.deep.equal({ feeds_read: 4, feeds_failed: 3, items_read: 12, items_matched: 8, duplicates_merged: 3, stories: 5 });
    expect(d).to.include({ total_stories: 5, returned: 5 });

    // The fund story: the earliest copy (alpha) is the source; beta's copy (same URL behind tracking) and
    // gamma's (same headline, another URL) are merged into it.
    const [fund, central, , miners] = d.items;
    expect(fund.url).to.equal(`${up.base}/a/1?utm_source=rss&utm_medium=feed`);
    expect(fund.canonical_url).to.equal(`${up.base}/a/1`);
    expect(fund.source).to.deep.include({ domain: "alpha-crypto.example", name: "Alpha Crypto", channel: "crypto", feed_url: `${up.base}/feeds/alpha.xml`, cached: false });
    expect(Date.parse(fund.source.fetched_at)).to.be.a("number").and.not.NaN;
    expect(fund.also_reported_by).to.deep.equal([
      { domain: "beta-chain.example", name: "Beta Chain", channel: "crypto", url: `${up.base}/a/1/?utm_campaign=x&fbclid=abc#top`, feed_url: `${up.base}/feeds/beta.atom` },
      { domain: "gamma-markets.example", name: "Gamma Markets", channel: "business", url: `${up.base}/c/3`, feed_url: `${up.base}/feeds/gamma.rdf` },
    ]);
    expect(fund.summary).to.equal("Strong demand lifts the funds; analysts are optimistic.");
    expect(fund).to.include({ matched_in: "title" });
    expect(central.source).to.deep.include({ domain: "gamma-markets.example", channel: "business", feed_url: `${up.base}/feeds/gamma.rdf` });
    // The miners' report: beta published it first (Atom), alpha's identical headline is merged.
    expect(miners.source.domain).to.equal("beta-chain.example");
    expect(miners.also_reported_by.map((a: Json) => a.domain)).to.deep.equal(["alpha-crypto.example"]);
    for (let i = 1; i < d.items.length; i++) expect(Date.parse(d.items[i - 1].published_at)).to.be.greaterThan(Date.parse(d.items[i].published_at));

    // The content trap in alpha's feed is left out and named.
    expect(d.excluded).to.deep.equal([{ domain: "alpha-crypto.example", title: "Bitcoin price update", url: `${up.base}/a/5`, rules: ["injection.ignore_instructions", "exfiltration.secret_request"] }]);

    expect(d.feeds.read.map((f: Json) => [f.domain, f.format, f.item_count])).to.deep.equal([
      ["alpha-crypto.example", "rss2", 5],
      ["beta-chain.example", "atom", 3],
      ["gamma-markets.example", "rdf", 3],
      ["delta-tech.example", "rss2", 1],
    ]);
    expect(d.feeds.failed.map((f: Json) => [f.domain, f.channel, f.error])).to.deep.equal([
      ["down-news.example", "general", "HTTP 500"],
      ["broken-times.example", "general", "malformed XML: Expected closing tag 'item' (opened in line 1, col 71) instead of closing tag 'channel'. (line 1)"],
      ["busy-wire.example", "business", "rate limited (HTTP 429, retry after 60)"],
    ]);
    expect(d.content_markdown).to.contain(`1. [Bitcoin ETF inflows surge to record as investors cheer](${up.base}/a/1?utm_source=rss&utm_medium=feed) (Alpha Crypto, alpha-crypto.example,`);
    expect(d.content_markdown).to.contain("- failed: busy-wire.example");
    expect(res.body.svc_trust.content_sha256).to.equal(createHash("sha256").update(d.content_markdown, "utf8").digest("hex"));
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("serves feeds read within the cache window from the cache and retries failed ones; honours channels and limit", async () => {
    const alphaHits = news.hits.get("/feeds/alpha.xml");
    const downHits = news.hits.get("/feeds/down.xml")!;
    const res = await pay({ task: "Scan the latest news about Bitcoin", channels: ["crypto"], limit: 2 });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(d.query.alternatives).to.deep.equal([["bitcoin"]]);
    expect(d.channels).to.deep.equal(["crypto"]);
    expect(d.items.map((i: Json) => i.title)).to.deep.equal(["Bitcoin ETF inflows surge to record as investors cheer", "Bitcoin exchange hacked; users fear losses in fraud"]);
    expect(d).to.include({ total_stories: 3, returned: 2 });
    expect(d.items[0].also_reported_by.map((a: Json) => a.domain)).to.deep.equal(["beta-chain.example"]);
    expect(d.feeds.read.map((f: Json) => [f.domain, f.cached])).to.deep.equal([["alpha-crypto.example", true], ["beta-chain.example", true]]);
    expect(d.feeds.failed).to.deep.equal([]);
    expect(d.items[0].source.cached).to.equal(true);
    expect(news.hits.get("/feeds/alpha.xml")).to.equal(alphaHits);

    const all = await pay({ topic: "bitcoin" });
    expect(all.body.deliverable.stats.feeds_failed).to.equal(3);
    expect(news.hits.get("/feeds/down.xml")).to.equal(downHits + 1); // failures are not cached
  });

  it("an AND of terms, OR alternatives and no match at all: an empty scan is still a scan", async () => {
    const and = await pay({ topic: "bitcoin ETF" });
    expect(and.body.deliverable.items.map((i: Json) => i.title)).to.deep.equal(["Bitcoin ETF inflows surge to record as investors cheer"]);
    const or = await pay({ topic: "ethereum OR stocks" });
    expect(or.body.deliverable.items.map((i: Json) => i.title)).to.deep.equal(["Stocks gain on strong earnings", "Ethereum developers schedule upgrade"]);
    const before = await up.balance();
    const none = await pay({ topic: "dogecoin" });
    expect(none.status).to.equal(200);
    expect(none.body.deliverable).to.include({ total_stories: 0, returned: 0 });
    expect(none.body.deliverable.content_markdown).to.contain("No story in the curated feeds matches this topic.");
    expect(await up.balance()).to.equal(before - PRICE);
  });

  it("charges nothing when every feed read fails (503)", async () => {
    await expectFailuresUncharged(up, SKU, [[{ topic: "bitcoin", channels: ["general"] }, 503]]);
  });

  it("refuses bad input before any challenge and charges nothing (400 naming the field)", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "topic"],
      [{ topic: "the of and" }, "topic"],
      [{ task: "news about the" }, "task"],
      [{ topic: "bitcoin", channels: ["sports"] }, "channels.0"],
      [{ topic: "bitcoin", limit: 0 }, "limit"],
      [{ topic: "x".repeat(201) }, "topic"],
      [{ topic: "bitcoin", max_age_hours: -1 }, "max_age_hours"],
    ]);
  });
});

import { expect } from "chai";
import { canonicalUrl, titleKey, urlKey } from "../../../src/news/canonical-url.js";
import { assetTopic, matchTopic, parseTopic } from "../../../src/news/topic-match.js";

describe("news: canonical URLs and title keys (dedup)", () => {
  it("drops tracking parameters, fragments, default ports and trailing slashes; sorts the rest; lower-cases the host", () => {
    expect(canonicalUrl("https://News.Example.com:443/a/1/?utm_source=rss&utm_medium=feed&id=7&fbclid=x&b=2#top")).to.equal("https://news.example.com/a/1?b=2&id=7");
    expect(canonicalUrl("https://news.example.com/a/1?gclid=1&mc_cid=2&_ga=3&ref=home&smid=tw")).to.equal("https://news.example.com/a/1");
    expect(canonicalUrl("https://news.example.com/")).to.equal("https://news.example.com/");
    expect(canonicalUrl("not a url")).to.equal("not a url");
  });

  it("keys one article the same across scheme, www. and tracking", () => {
    expect(urlKey("http://www.news.example.com/a/1?utm_campaign=x")).to.equal(urlKey("https://news.example.com/a/1/#comments"));
    expect(urlKey("https://news.example.com/a/1?id=1")).to.not.equal(urlKey("https://news.example.com/a/1?id=2"));
  });

  it("keys a headline by its letters and digits only", () => {
    expect(titleKey("Bitcoin ETF inflows surge, to record!")).to.equal("bitcoin etf inflows surge to record");
    expect(titleKey("Crème brûlée — Café’s “best”")).to.equal("creme brulee cafe s best");
  });
});

describe("news: topic matching", () => {
  it("parses alternatives (OR), quoted phrases and drops common words", () => {
    expect(parseTopic("latest news about Bitcoin ETF").alternatives).to.deep.equal([["bitcoin", "etf"]]);
    expect(parseTopic('"federal reserve" rates OR ECB').alternatives).to.deep.equal([["federal reserve", "rates"], ["ecb"]]);
    expect(parseTopic("the of and").alternatives).to.deep.equal([]);
  });

  it("needs every term of an alternative as a whole word in the title or summary; plurals match", () => {
    const q = parseTopic("bitcoin ETF");
    expect(matchTopic(q, "Bitcoin ETFs draw record inflows", "")).to.deep.equal({ terms: ["bitcoin", "etf"], matched_in: "title" });
    expect(matchTopic(q, "Bitcoin slips", "Spot ETF outflows")).to.deep.equal({ terms: ["bitcoin", "etf"], matched_in: "title_and_summary" });
    expect(matchTopic(q, "Bitcoin slips", "nothing else")).to.equal(undefined);
    expect(matchTopic(parseTopic("coin"), "Bitcoin rises", "")).to.equal(undefined); // whole words only
    expect(matchTopic(parseTopic("stablecoin"), "Stablecoins grow", "")).to.not.equal(undefined);
    expect(matchTopic(parseTopic('"federal reserve"'), "Reserve of the Federal bank", "")).to.equal(undefined);
    expect(matchTopic(parseTopic('"federal reserve"'), "The Federal-Reserve holds", "")).to.not.equal(undefined);
  });

  it("matches an asset by its name or its ticker", () => {
    const q = assetTopic("btc");
    expect(q.alternatives).to.deep.equal([["bitcoin"], ["btc"]]);
    expect(matchTopic(q, "BTC rally stalls", "")).to.deep.equal({ terms: ["btc"], matched_in: "title" });
    expect(matchTopic(q, "Bitcoin miners", "")).to.deep.equal({ terms: ["bitcoin"], matched_in: "title" });
    expect(assetTopic("ZZZ").alternatives).to.deep.equal([["zzz"]]);
  });
});

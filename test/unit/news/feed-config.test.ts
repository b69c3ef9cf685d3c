import { expect } from "chai";
import { CHANNELS, domainsOf, FeedConfigError, loadFeeds, MIN_CURATED_DOMAINS, parseFeeds } from "../../../src/news/feed-config.js";
import { loadConfig } from "../../../src/config.js";

describe("news: the curated feeds file", () => {
  it("ships at least 44 distinct outlet domains over every channel, each with an https feed URL", () => {
    const feeds = loadFeeds(loadConfig({}).news.feedsFile);
    const domains = domainsOf(feeds);
    expect(domains.length).to.be.at.least(MIN_CURATED_DOMAINS);
    expect(MIN_CURATED_DOMAINS).to.equal(44);
    for (const c of CHANNELS) expect(feeds.filter((f) => f.channel === c).length, c).to.be.at.least(8);
    for (const f of feeds) expect(f.url, f.name).to.match(/^https:\/\//);
    expect(new Set(feeds.map((f) => f.url)).size).to.equal(feeds.length);
  });

  it("is validated: unknown fields, bad channels, bad URLs and duplicates are refused with the entry named", () => {
    expect(() => parseFeeds("feeds:\n  - { domain: a.example, name: A, channel: sports, url: 'https://a.example/rss' }")).to.throw(FeedConfigError, /feeds\.0\.channel/);
    expect(() => parseFeeds("feeds:\n  - { domain: a.example, name: A, channel: tech, url: 'ftp://a.example/rss' }")).to.throw(FeedConfigError, /feeds\.0\.url/);
    expect(() => parseFeeds("feeds:\n  - { domain: A_B, name: A, channel: tech, url: 'https://a.example/rss' }")).to.throw(FeedConfigError, /feeds\.0\.domain/);
    expect(() => parseFeeds("feeds:\n  - { domain: a.example, name: A, channel: tech, url: 'https://a.example/rss', extra: 1 }")).to.throw(FeedConfigError);
    expect(() => parseFeeds("feeds:\n  - { domain: a.example, name: A, channel: tech, url: 'https://a.example/rss' }\n  - { domain: a.example, name: B, channel: tech, url: 'https://a.example/rss' }")).to.throw(FeedConfigError, /listed twice/);
    expect(() => parseFeeds("feeds: []")).to.throw(FeedConfigError);
    expect(() => parseFeeds("feeds: [")).to.throw(FeedConfigError, /not valid YAML/);
    expect(() => loadFeeds("/nonexistent/feeds.yaml")).to.throw(FeedConfigError, /cannot read/);
  });

  it("is chosen by NEWS_FEEDS_FILE, read with the documented defaults", () => {
    const c = loadConfig({ NEWS_FEEDS_FILE: "/etc/svc/feeds.yaml" }).news;
    expect(c.feedsFile).to.equal("/etc/svc/feeds.yaml");
    expect(loadConfig({}).news).to.deep.include({ cacheMs: 300_000, feedTimeoutMs: 6_000, feedMaxBytes: 2 * 1024 * 1024, concurrency: 24 });
  });
});

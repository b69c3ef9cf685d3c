import { expect } from "chai";
import { FeedParseError, parseFeed } from "../../../src/news/feed-parser.js";
import { atom, rdf, rss2, type Story } from "../../fixtures/news-feeds.js";

const NOW = Date.parse("2026-11-20T12:00:00.000Z");
const stories: Story[] = [
  { title: "Fed holds rates & signals patience", link: "https://news.example/a/1?utm_source=rss", agoMin: 60, summary: "Officials <b>held</b> rates &amp; said &ldquo;patience&rdquo;." },
  { title: "Chips rally", link: "https://news.example/a/2", agoMin: 120, summary: "Shares rose&nbsp;3%." },
];

describe("feed parser (fast-xml-parser): RSS 2.0, Atom, RDF", () => {
  it("reads RSS 2.0 items: title, link, RFC 822 date as ISO, HTML summary as text, guid", () => {
    const f = parseFeed(rss2("Example", "https://news.example", stories, NOW), "https://news.example/feed");
    expect(f.format).to.equal("rss2");
    expect(f.title).to.equal("Example");
    expect(f.items).to.have.length(2);
    expect(f.items[0]).to.deep.include({ title: "Fed holds rates & signals patience", link: "https://news.example/a/1?utm_source=rss", published: "2026-11-20T11:00:00.000Z", id: "https://news.example/a/1?utm_source=rss" });
    expect(f.items[0]!.summary).to.equal("Officials held rates & said “patience”.");
    expect(f.items[0]!.rawSummary).to.contain("<b>held</b>");
    expect(f.items[1]!.summary).to.equal("Shares rose 3%.");
  });

  it("reads Atom entries: the alternate link (not the enclosure), published time, escaped HTML summary", () => {
    const f = parseFeed(atom("Example Atom", "https://news.example", stories, NOW), "https://news.example/atom");
    expect(f.format).to.equal("atom");
    expect(f.title).to.equal("Example Atom");
    expect(f.items.map((i) => i.link)).to.deep.equal(["https://news.example/a/1?utm_source=rss", "https://news.example/a/2"]);
    expect(f.items[0]!.published).to.equal("2026-11-20T11:00:00.000Z");
    expect(f.items[0]!.summary).to.equal("Officials held rates & said “patience”.");
  });

  it("reads RSS 1.0 (RDF) items with dc:date", () => {
    const f = parseFeed(rdf("Example RDF", "https://news.example", stories, NOW), "https://news.example/rdf");
    expect(f.format).to.equal("rdf");
    expect(f.title).to.equal("Example RDF");
    expect(f.items.map((i) => [i.title, i.link, i.published, i.id])).to.deep.equal([
      ["Fed holds rates & signals patience", "https://news.example/a/1?utm_source=rss", "2026-11-20T11:00:00.000Z", "https://news.example/a/1?utm_source=rss"],
      ["Chips rally", "https://news.example/a/2", "2026-11-20T10:00:00.000Z", "https://news.example/a/2"],
    ]);
  });

  it("handles one-item feeds, relative links, permalink guids, missing or unreadable dates, and drops untitled items", () => {
    const xml = `<?xml version="1.0"?><rss version="2.0"><channel><title>One</title>
      <item><title>Only item</title><link>/story/7</link><pubDate>sometime soon</pubDate></item>
      <item><title>By guid</title><guid isPermaLink="true">https://one.example/g/1</guid><pubDate>Tue, 10 Jun 2025 04:00:00 EST</pubDate></item>
      <item><description>no title here</description></item>
      <item><title>Script link</title><link>javascript:alert(1)</link></item>
    </channel></rss>`;
    const f = parseFeed(xml, "https://one.example/feed.xml");
    expect(f.items.map((i) => [i.title, i.link, i.published])).to.deep.equal([
      ["Only item", "https://one.example/story/7", null],
      ["By guid", "https://one.example/g/1", "2025-06-10T09:00:00.000Z"],
      ["Script link", null, null],
    ]);
  });

  it("refuses malformed XML and documents that are not feeds", () => {
    expect(() => parseFeed(`<?xml version="1.0"?><rss><channel><item><title>x</title></channel></rss>`, "https://x.example/")).to.throw(FeedParseError, /malformed XML/);
    expect(() => parseFeed("<html><body>Not a feed</body></html>", "https://x.example/")).to.throw(FeedParseError, /not an RSS, Atom or RDF feed \(root element html\)/);
    expect(() => parseFeed("{\"items\": []}", "https://x.example/")).to.throw(FeedParseError);
    expect(() => parseFeed(`<rss version="2.0"></rss>`, "https://x.example/")).to.throw(FeedParseError, /without a channel/);
  });

  it("does not let DOCTYPE entities blow up (billion laughs is refused or bounded)", () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"><!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">]><rss version="2.0"><channel><title>x</title><item><title>&lol6;</title></item></channel></rss>`;
    let title = "";
    try {
      title = parseFeed(lol, "https://x.example/").items[0]?.title ?? "";
    } catch (err) {
      expect(err).to.be.instanceOf(Error);
    }
    expect(title.length).to.be.lessThan(100_000);
  });
});

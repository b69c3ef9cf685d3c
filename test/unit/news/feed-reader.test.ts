import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { FeedReader } from "../../../src/news/feed-reader.js";
import type { FeedEntry } from "../../../src/news/feed-config.js";
import { CircuitBreakers } from "../../../src/policy/circuit-breakers.js";
import { rss2 } from "../../fixtures/news-feeds.js";

// The feed reader against a local server: redirects, status errors, rate limiting, size and time
// bounds, the short cache, shared in-flight requests and the concurrency bound.

describe("news: feed reader (safe fetcher, bounded, cached)", function () {
  let server: http.Server;
  let base: string;
  const hits = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const hanging: http.ServerResponse[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const p = new URL(req.url!, "http://x").pathname;
      hits.set(p, (hits.get(p) ?? 0) + 1);
      const ok = () => res.writeHead(200, { "content-type": "application/rss+xml" }).end(rss2("Feed", base, [{ title: `Story at ${p}`, link: `${base}${p}/1`, agoMin: 5, summary: "text" }], Date.now()));
      if (p === "/moved") return res.writeHead(301, { location: "/slow/final" }).end();
      if (p === "/private-hop") return res.writeHead(302, { location: "http://10.0.0.1/feed" }).end();
      if (p === "/limited") return res.writeHead(429, { "retry-after": "120" }).end();
      if (p === "/gone") return res.writeHead(410).end();
      if (p === "/hang") return void hanging.push(res);
      if (p === "/huge") {
        const body = `<rss version="2.0"><channel><title>Big</title>${"<item><title>padding</title></item>".repeat(12000)}</channel></rss>`;
        return res.writeHead(200, { "content-type": "application/rss+xml", "content-length": String(Buffer.byteLength(body)) }).end(body);
      }
      if (p === "/huge-chunked") {
        res.writeHead(200, { "content-type": "application/rss+xml" });
        res.write(`<rss version="2.0"><channel><title>Big</title>`);
        return res.end(`${"<item><title>padding</title></item>".repeat(12000)}</channel></rss>`);
      }
      if (p === "/html") return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>hi</body></html>");
      if (p.startsWith("/slow")) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return setTimeout(() => {
          inFlight--;
          ok();
        }, 30);
      }
      ok();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const r of hanging) r.destroy();
    server.close();
  });

  const feed = (p: string): FeedEntry => ({ domain: "x.example", name: `Feed ${p}`, channel: "tech", url: `${base}${p}` });
  const reader = (o: Partial<{ cacheMs: number; concurrency: number; timeoutMs: number; maxBytes: number }> = {}, breakers?: CircuitBreakers) =>
    new FeedReader([], { allow: [new URL(base).host], allowHttp: true, breakers }, { timeoutMs: 2_000, maxBytes: 1024 * 1024, cacheMs: 60_000, concurrency: 4, userAgent: "test", ...o });

  it("follows redirects (each hop re-checked) and reports the final URL; a hop into a private range fails", async () => {
    const r = reader();
    const [moved, priv] = await r.readAll([feed("/moved"), feed("/private-hop")]);
    expect(moved).to.deep.include({ ok: true, cached: false, format: "rss2", finalUrl: `${base}/slow/final` });
    expect(priv!.ok).to.equal(false);
    expect((priv as { error: string }).error).to.match(/not a public address|non-public/);
  });

  it("names each failure: rate limiting with its Retry-After, HTTP status, size over the bound (declared or not), not a feed, timeout", async () => {
    const r = reader({ timeoutMs: 300, maxBytes: 64 * 1024 });
    const reads = await r.readAll([feed("/limited"), feed("/gone"), feed("/huge"), feed("/huge-chunked"), feed("/html"), feed("/hang")]);
    expect(reads.map((x) => (x.ok ? "ok" : x.error))).to.deep.equal([
      "rate limited (HTTP 429, retry after 120)",
      "HTTP 410",
      "feed larger than 65536 bytes",
      "feed larger than 65536 bytes",
      "not an RSS, Atom or RDF feed (root element html)",
      "no complete answer within 300 ms",
    ]);
  });

  it("reuses a feed read within the cache window, never a failure; concurrent readers share one request", async () => {
    const r = reader();
    const p = "/slow/cached";
    const [a, b] = await Promise.all([r.read(feed(p)), r.read(feed(p))]);
    expect(hits.get(p)).to.equal(1);
    expect(a!.ok && b!.ok).to.equal(true);
    const again = await r.read(feed(p));
    expect(again).to.deep.include({ ok: true, cached: true });
    expect(hits.get(p)).to.equal(1);
    const before = hits.get("/gone") ?? 0;
    await r.read(feed("/gone"));
    await r.read(feed("/gone"));
    expect(hits.get("/gone")).to.equal(before + 2);
    const fresh = reader({ cacheMs: 0 });
    await fresh.read(feed(p));
    expect(hits.get(p)).to.equal(2);
  });

  it("reads in parallel up to the concurrency bound", async () => {
    maxInFlight = 0;
    const r = reader({ concurrency: 3 });
    const reads = await r.readAll(Array.from({ length: 9 }, (_, i) => feed(`/slow/p${i}`)));
    expect(reads.every((x) => x.ok)).to.equal(true);
    expect(maxInFlight).to.be.at.most(3).and.at.least(2);
  });

  it("an outlet whose circuit breaker is open fails fast and is reported, the others are read", async () => {
    const breakers = new CircuitBreakers({ threshold: 1, cooldownMs: 60_000 });
    const r = reader({ cacheMs: 0 }, breakers);
    await r.read(feed("/gone")); // a 410 is not an upstream failure
    expect(breakers.state(base)).to.equal("closed");
    await r.read(feed("/limited")); // a 429 is
    expect(breakers.state(base)).to.equal("open");
    const before = hits.get("/slow/x") ?? 0;
    const x = await r.read(feed("/slow/x"));
    expect(x.ok).to.equal(false);
    expect((x as { error: string }).error).to.contain("circuit breaker");
    expect(hits.get("/slow/x") ?? 0).to.equal(before);
  });
});

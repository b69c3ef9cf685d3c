import { expect } from "chai";
import { createHash } from "node:crypto";
import http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { acceptedJobId, pollResult, pollUntil } from "../../fixtures/results.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";
import { ResearchBriefOutput } from "../../../src/skus/research-topic-deep-researcher.js";
import { INJECTED_ARTICLE, NONCE_ARTICLE, SETTLEMENT_ARTICLE } from "../../fixtures/web/research-pages.js";

const SKU = "research.topic-deep-researcher";

const requested: string[] = [];
const site: http.RequestListener = (req, res) => {
  requested.push(req.url!);
  const page = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  if (req.url === "/settle") return page(SETTLEMENT_ARTICLE);
  if (req.url === "/eip-3009") return page(NONCE_ARTICLE);
  if (req.url === "/short/nonce") return res.writeHead(301, { location: "/eip-3009" }).end();
  if (req.url === "/faq") return page(INJECTED_ARTICLE);
  if (req.url === "/busy") return res.writeHead(503, { "retry-after": "30" }).end("overloaded");
  if (req.url === "/unrelated") return page(`<html><body><article><h1>Alpine glaciers</h1><p>Glaciers in the Alps have retreated for over a century as summers warmed across the region.</p><p>Meltwater feeds rivers that supply hydroelectric dams and farms downstream in spring.</p></article></body></html>`);
  res.writeHead(404, { "content-type": "text/html" }).end("<html><body>Not found</body></html>");
};

describe("research.topic-deep-researcher: a cited brief from the buyer's sources only (async)", function () {
  this.timeout(120_000);
  const up = upstreamForSuite(site);

  const order = async (body: unknown) => acceptedJobId(await up.pay(SKU, body));

  it("is paid, polled to delivered, and every claim cites a fetched passage; a failing source is listed, an injected one excluded", async () => {
    const before = await up.balance();
    requested.length = 0;
    const urls = [`${up.base}/settle`, `${up.base}/short/nonce`, `${up.base}/faq`, `${up.base}/missing`];
    const jobId = await order({
      task: "How do x402 payments settle exactly once? What does settlement cost in gas fees on Ethereum mainnet?",
      urls,
      claims: ["Settlement on Base confirms in about 2 seconds.", "Settlement on Base confirms in about 12 seconds."],
    });
    const done = await pollResult(up.srv, jobId);
    expect(done.status).to.equal("delivered");
    const d = done.deliverable;
    expect(() => ResearchBriefOutput.parse(d)).not.to.throw();
    expect(done.powered_by).to.equal("svc-research/extractive-bm25");
    expect(d.engine).to.equal("extractive");

    // Only the buyer's URLs (and the redirect they lead to) were fetched.
    expect([...new Set(requested)].sort()).to.deep.equal(["/eip-3009", "/faq", "/missing", "/settle", "/short/nonce"]);
    expect(d.sources.map((s: Json) => [s.url, s.status])).to.deep.equal([
      [`${up.base}/settle`, "used"],
      [`${up.base}/short/nonce`, "used"],
      [`${up.base}/faq`, "excluded"],
      [`${up.base}/missing`, "failed"],
    ]);
    expect(d.sources[1]).to.include({ final_url: `${up.base}/eip-3009`, redirects: 1 });
    expect(d.sources[2].matched_rules).to.deep.equal(["injection.ignore_instructions"]);
    expect(d.sources[3].error).to.contain("404");
    expect(d.summary).to.include({ sources_used: 2, sources_failed: 1, sources_excluded: 1 });

    // Every supported claim cites passages of used sources; the first cited passage quotes it.
    const supported = d.claims.filter((c: Json) => c.status === "supported");
    expect(supported.length).to.be.greaterThan(1);
    for (const c of supported) {
      expect(c.citations.length).to.be.at.least(1);
      for (const n of c.citations) {
        const cite = d.citations.find((x: Json) => x.n === n);
        expect([`${up.base}/settle`, `${up.base}/eip-3009`]).to.include(cite.url);
        expect(cite.char_end).to.be.greaterThan(cite.char_start);
      }
      if (c.kind === "extracted") expect(d.citations.find((x: Json) => x.n === c.citations[0]).text).to.contain(c.text);
      const cites = c.citations.map((n: number) => `[${n}]`).join("");
      expect(d.content_markdown).to.contain(c.kind === "checked" ? `${c.text} — supported ${cites}` : `${c.text} ${cites}`);
    }
    // Nothing from the excluded page is quoted.
    expect(JSON.stringify(d.citations)).not.to.contain("Fees are deducted from the provider payout");
    // The unanswered question and the wrong statement are unverified, without citations.
    const unverified = d.claims.filter((c: Json) => c.status === "unverified");
    expect(unverified.map((c: Json) => c.kind).sort()).to.deep.equal(["checked", "gap"]);
    for (const c of unverified) expect(c.citations).to.deep.equal([]);
    expect(d.content_markdown).to.contain("**Unverified:** No fetched source addresses");
    expect(d.content_markdown).to.contain("excluded by the content-trap scan (injection.ignore_instructions)");

    expect(done.svc_trust.content_sha256).to.equal(createHash("sha256").update(d.content_markdown, "utf8").digest("hex"));
    expect(done.svc_trust.content_flags ?? []).to.deep.equal([]);
    expect(await up.balance()).to.equal(before - 50_000n);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("delivers a brief of unverified gaps when the sources do not address the task", async () => {
    const done = await pollResult(up.srv, await order({ task: "What is the settlement finality of x402 payments?", urls: [`${up.base}/unrelated`] }));
    expect(done.status).to.equal("delivered");
    expect(done.deliverable.claims.map((c: Json) => [c.kind, c.status])).to.deep.equal([["gap", "unverified"]]);
    expect(done.deliverable.citations).to.deep.equal([]);
  });

  it("refunds the job when no source can be read (404, 503) or every source is a content trap", async () => {
    const before = await up.balance();
    const unreadable = await pollUntil(up.srv, await order({ task: "payments settlement", urls: [`${up.base}/missing`, `${up.base}/busy`] }), ["refunded"]);
    expect(unreadable.error).to.contain("none of the 2 sources could be read");
    expect(unreadable.error).to.match(/^failed after 3 attempts/); // unreadable sources may recover: retried
    expect(unreadable.refund_tx_hash).to.match(/^0x[0-9a-f]{64}$/);
    const trapped = await pollUntil(up.srv, await order({ task: "payments settlement", urls: [`${up.base}/faq`] }), ["refunded"]);
    expect(trapped.error).to.contain("content-trap");
    expect(trapped.error).to.match(/^failed after 1 attempts/); // a refusal is not retried
    expect(await up.balance()).to.equal(before);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("refuses bad input before any challenge and charges nothing", async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `https://example.com/${i}`);
    await expectBadInputRefused(up, SKU, [
      [{ task: "x402 settlement" }, "urls"],
      [{ task: "x402 settlement", urls: [] }, "urls"],
      [{ task: "x402 settlement", urls: eleven }, "urls"],
      [{ task: "x402 settlement", urls: ["http://10.0.0.8/internal"] }, "urls.0"],
      [{ task: "x402 settlement", urls: ["https://example.com/a", "file:///etc/passwd"] }, "urls.1"],
      [{ task: "the of and", urls: ["https://example.com/a"] }, "task"],
      [{ urls: ["https://example.com/a"] }, "task"],
      [{ task: "x402 settlement", urls: ["https://example.com/a"], max_claims: 50 }, "max_claims"],
    ]);
    expect((await up.unpaid(SKU, { task: "x" })).status).to.equal(400);
  });
});

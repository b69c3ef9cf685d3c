import { expect } from "chai";
import http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import type { Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";

const SKU = "ops.link-integrity";

// A site on loopback with every case a link checker meets.
const site: http.RequestListener = (req, res) => {
    const path = req.url ?? "/";
    if (path === "/ok") return res.writeHead(200, { "content-type": "text/html" }).end(req.method === "HEAD" ? undefined : "<p>ok</p>");
    if (path === "/gone") return res.writeHead(404).end();
    if (path === "/moved") return res.writeHead(301, { location: "/ok" }).end();
    if (path === "/loop") return res.writeHead(302, { location: "/loop" }).end();
    if (path === "/no-head") return req.method === "HEAD" ? res.writeHead(405, { allow: "GET" }).end() : res.writeHead(200).end("fine");
    if (path === "/to-metadata") return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (path === "/reset") return req.socket.destroy();
    res.writeHead(500).end();
};

describe("ops.link-integrity: HEAD/GET every URL, PASS/FAIL with status codes and redirects", function () {
  this.timeout(60_000);
  const up = upstreamForSuite(site);

  const pay = (body: unknown) => up.payJson(SKU, body);

  it("checks every URL of the task and of `urls` once, and reports each with its status code, method and redirects", async () => {
    const before = await up.balance();
    const res = await pay({ task: `Check ${up.base}/ok, ${up.base}/gone and ${up.base}/moved.`, urls: [`${up.base}/no-head`, `${up.base}/loop`, `${up.base}/to-metadata`, `${up.base}/reset`, `${up.base}/ok`] });
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal("delivered");
    const d = res.body.deliverable;
    const byUrl = new Map((d.results as Json[]).map((r) => [r.url.replace(up.base, ""), r]));
    expect([...byUrl.keys()]).to.deep.equal(["/no-head", "/loop", "/to-metadata", "/reset", "/ok", "/gone", "/moved"]);
    expect(byUrl.get("/ok")).to.include({ status: "PASS", status_code: 200, method: "HEAD" });
    expect(byUrl.get("/gone")).to.include({ status: "FAIL", status_code: 404 });
    expect(byUrl.get("/moved")).to.include({ status: "PASS", status_code: 200, final_url: `${up.base}/ok` });
    expect(byUrl.get("/moved")!.redirects).to.deep.equal([{ status_code: 301, location: `${up.base}/ok` }]);
    expect(byUrl.get("/no-head")).to.include({ status: "PASS", status_code: 200, method: "GET" });
    expect(byUrl.get("/loop")).to.include({ status: "FAIL" });
    expect(byUrl.get("/loop")!.error).to.contain("redirects");
    expect(byUrl.get("/to-metadata")).to.include({ status: "FAIL" });
    expect(byUrl.get("/to-metadata")!.error).to.contain("not a public address");
    expect(byUrl.get("/reset")).to.include({ status: "FAIL", status_code: null });
    expect(d).to.include({ status: "FAIL", checked: 7, passed: 3, failed: 4 });
    expect(await up.balance()).to.equal(before - 10_000n);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("PASS overall when every link answers 2xx", async () => {
    const res = await pay({ task: `${up.base}/ok ${up.base}/moved` });
    expect(res.body.deliverable).to.include({ status: "PASS", checked: 2, passed: 2, failed: 0 });
  });

  it("refuses before any challenge or charge: no URL, a private address, a non-http scheme, too many URLs", async () => {
    const before = await up.balance();
    const cases = [
      { task: "no links here" },
      { urls: ["http://10.0.0.1/admin"] },
      { urls: ["http://169.254.169.254/latest/meta-data/"] },
      { urls: ["ftp://example.com/file"] },
      { urls: Array.from({ length: 21 }, (_, i) => `https://example.com/${i}`) },
      { task: 42 },
    ];
    for (const body of cases) {
      const res = await up.unpaid(SKU, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.challenged).to.equal(false);
      expect(res.body.error.code).to.equal("invalid_input");
    }
    expect(await up.balance()).to.equal(before);
  });
});

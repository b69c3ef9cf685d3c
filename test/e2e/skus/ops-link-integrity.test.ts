import { expect } from "chai";
import http from "node:http";
import type { TestServer } from "../../fixtures/test-server.js";
import { withUpstream, type UpstreamSetup } from "../../fixtures/upstream.js";
import { usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };

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
  let up: UpstreamSetup;
  let srv: TestServer;
  let base: string;
  let buyer: Buyer;
  before(async () => {
    up = await withUpstream(site);
    ({ srv, base, buyer } = up);
  });
  after(() => up.close());

  const pay = (body: unknown) => up.pay("ops.link-integrity", body);

  it("checks every URL of the task and of `urls` once, and reports each with its status code, method and redirects", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await pay({ task: `Check ${base}/ok, ${base}/gone and ${base}/moved.`, urls: [`${base}/no-head`, `${base}/loop`, `${base}/to-metadata`, `${base}/reset`, `${base}/ok`] });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Json;
    expect(body.status).to.equal("delivered");
    const d = body.deliverable;
    const byUrl = new Map((d.results as Json[]).map((r) => [r.url.replace(base, ""), r]));
    expect([...byUrl.keys()]).to.deep.equal(["/no-head", "/loop", "/to-metadata", "/reset", "/ok", "/gone", "/moved"]);
    expect(byUrl.get("/ok")).to.include({ status: "PASS", status_code: 200, method: "HEAD" });
    expect(byUrl.get("/gone")).to.include({ status: "FAIL", status_code: 404 });
    expect(byUrl.get("/moved")).to.include({ status: "PASS", status_code: 200, final_url: `${base}/ok` });
    expect(byUrl.get("/moved")!.redirects).to.deep.equal([{ status_code: 301, location: `${base}/ok` }]);
    expect(byUrl.get("/no-head")).to.include({ status: "PASS", status_code: 200, method: "GET" });
    expect(byUrl.get("/loop")).to.include({ status: "FAIL" });
    expect(byUrl.get("/loop")!.error).to.contain("redirects");
    expect(byUrl.get("/to-metadata")).to.include({ status: "FAIL" });
    expect(byUrl.get("/to-metadata")!.error).to.contain("not a public address");
    expect(byUrl.get("/reset")).to.include({ status: "FAIL", status_code: null });
    expect(d).to.include({ status: "FAIL", checked: 7, passed: 3, failed: 4 });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    await expectLedgerConsistent(srv.ds);
  });

  it("PASS overall when every link answers 2xx", async () => {
    const res = await pay({ task: `${base}/ok ${base}/moved` });
    expect(((await res.json()) as Json).deliverable).to.include({ status: "PASS", checked: 2, passed: 2, failed: 0 });
  });

  it("refuses before any challenge or charge: no URL, a private address, a non-http scheme, too many URLs", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const cases = [
      { task: "no links here" },
      { urls: ["http://10.0.0.1/admin"] },
      { urls: ["http://169.254.169.254/latest/meta-data/"] },
      { urls: ["ftp://example.com/file"] },
      { urls: Array.from({ length: 21 }, (_, i) => `https://example.com/${i}`) },
      { task: 42 },
    ];
    for (const body of cases) {
      const res = await fetch(`${srv.url}/v1/services/ops.link-integrity`, { method: "POST", headers: json, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get("payment-required")).to.equal(null);
      expect(((await res.json()) as Json).error.code).to.equal("invalid_input");
    }
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });
});

import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { safeRequest, UnsafeUrlError, type SafeFetchPolicy } from "../../../src/platform/http/safe-fetch.js";
import { followRedirects } from "../../../src/platform/http/follow-redirects.js";
import { CircuitBreakers, CircuitOpenError } from "../../../src/policy/circuit-breakers.js";

describe("safe fetcher: private ranges refused, allowlist explicit, redirects re-checked, breakers fed", () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  before(async () => {
    server = http.createServer((req, res) => {
      hits++;
      if (req.url === "/to-private") return res.writeHead(302, { location: "http://10.0.0.7/admin" }).end();
      if (req.url === "/to-loopback-name") return res.writeHead(302, { location: `http://localhost:${port}/ok` }).end();
      if (req.url === "/boom") return res.writeHead(503).end("down");
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  const open: SafeFetchPolicy = { allow: [], allowHttp: true };
  const get = (url: string, policy: SafeFetchPolicy = open) => safeRequest(url, { method: "GET", timeoutMs: 2_000 }, policy);

  it("refuses loopback, 10/8, the metadata address and a name resolving to loopback, before connecting", async () => {
    const before = hits;
    for (const url of [`http://127.0.0.1:${port}/ok`, "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", `http://localhost:${port}/ok`, "http://[::1]/"]) {
      const err = await get(url).then(() => undefined, (e: unknown) => e);
      expect(err, url).to.be.instanceOf(UnsafeUrlError);
    }
    expect(hits).to.equal(before);
  });

  it("reaches an allowlisted host:port only, and refuses a redirect from it into a private range or to a loopback name", async () => {
    const policy: SafeFetchPolicy = { allow: [`127.0.0.1:${port}`], allowHttp: true };
    expect((await get(`http://127.0.0.1:${port}/ok`, policy)).body).to.equal("ok");
    const other = await get(`http://127.0.0.1:${port + 1}/ok`, policy).then(() => undefined, (e: unknown) => e);
    expect(other).to.be.instanceOf(UnsafeUrlError);
    for (const path of ["/to-private", "/to-loopback-name"]) {
      const err = await followRedirects(`http://127.0.0.1:${port}${path}`, "GET", policy, { timeoutMs: 2_000, maxBytes: 1024, userAgent: "test" }).then(() => undefined, (e: unknown) => e);
      expect(err, path).to.be.instanceOf(UnsafeUrlError);
    }
  });

  it("feeds per-origin breakers: repeated 5xx open it and further requests fail fast without reaching the upstream", async () => {
    const breakers = new CircuitBreakers({ threshold: 2, cooldownMs: 60_000 });
    const policy: SafeFetchPolicy = { allow: [`127.0.0.1:${port}`], allowHttp: true, breakers };
    expect((await get(`http://127.0.0.1:${port}/boom`, policy)).status).to.equal(503);
    expect((await get(`http://127.0.0.1:${port}/boom`, policy)).status).to.equal(503);
    const before = hits;
    const err = await get(`http://127.0.0.1:${port}/ok`, policy).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(CircuitOpenError);
    expect(hits).to.equal(before);
    // A refused target says nothing about an upstream's health.
    await get("http://10.0.0.1/", policy).catch(() => undefined);
    expect(breakers.state("http://10.0.0.1")).to.equal("closed");
  });
});

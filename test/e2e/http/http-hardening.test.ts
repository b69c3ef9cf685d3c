import { expect } from "chai";
import net from "node:net";
import http from "node:http";
import http2 from "node:http2";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { registerAgent } from "../../fixtures/agents.js";

// Security hardening of the one port: body and header limits on every front, slow clients cut off,
// the CORS policy of browser-facing routes, and security headers on HTML and JSON.

const MAX_BODY = 4096;

/** Opens a raw TCP connection, writes `chunks` (one per `everyMs`), and resolves with what came back once the server closed it. */
function rawUntilClosed(url: string, first: string, trickle: string[] = [], everyMs = 100): Promise<{ closedByServer: boolean; received: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let received = "";
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      if (first) socket.write(first);
      timer = setInterval(() => {
        if (i < trickle.length && !socket.destroyed) socket.write(trickle[i++]!);
      }, everyMs);
    });
    socket.on("data", (d) => (received += d.toString()));
    socket.on("error", () => {});
    // Safety net only (the test's own timeout would fire otherwise): never reached when the server closes.
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      resolve({ closedByServer: false, received });
    }, 20_000);
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedByServer: true, received });
    });
  });
}

describe("HTTP hardening: limits, slow clients, CORS, security headers", function () {
  this.timeout(60_000);
  let srv: TestServer;
  let listed: TestServer;
  before(async () => {
    srv = await startTestServer({ MAX_BODY_BYTES: String(MAX_BODY), HTTP_HEADERS_TIMEOUT_MS: "400", HTTP_REQUEST_TIMEOUT_MS: "1500" });
    listed = await startTestServer({ CORS_ORIGINS: "https://wallet.example, http://localhost:5173" });
  });
  after(async () => {
    await srv?.close();
    await listed?.close();
  });

  describe("body and header limits", () => {
    const big = JSON.stringify({ name: "x".repeat(MAX_BODY * 2) });

    it("REST: 413 body_too_large, with or without a declared length", async () => {
      const res = await fetch(`${srv.url}/v1/agents/register`, { method: "POST", headers: { "content-type": "application/json" }, body: big });
      expect(res.status).to.equal(413);
      expect(((await res.json()) as any).error.code).to.equal("body_too_large");
      const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${srv.url}/v1/agents/register`, { method: "POST", headers: { "content-type": "application/json" } }, (r) => {
          let body = "";
          r.on("data", (d) => (body += d));
          r.on("end", () => resolve({ status: r.statusCode!, body }));
        });
        req.on("error", reject);
        req.write(big.slice(0, 3000));
        req.end(big.slice(3000)); // no content-length: Transfer-Encoding chunked
      });
      expect(chunked.status).to.equal(413);
      expect(JSON.parse(chunked.body).error.code).to.equal("body_too_large");
    });

    it("Connect (JSON and binary): 413 with code resource_exhausted", async () => {
      for (const type of ["application/json", "application/proto"]) {
        const res = await fetch(`${srv.url}/svc.catalog.v1.CatalogService/ListServices`, { method: "POST", headers: { "content-type": type }, body: big });
        expect(res.status, type).to.equal(413);
        const body = (await res.json()) as { code: string; message: string };
        expect(body.code).to.equal("resource_exhausted");
        expect(body.message).to.contain("body_too_large");
      }
    });

    it("MCP and A2A fronts: 413 body_too_large", async () => {
      for (const path of ["/mcp", "/a2a/jsonrpc"]) {
        const res = await fetch(`${srv.url}${path}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: big });
        expect(res.status, path).to.equal(413);
        expect(JSON.stringify(await res.json()), path).to.contain("body_too_large");
      }
    });

    it("a small body still works on each front", async () => {
      const res = await fetch(`${srv.url}/svc.catalog.v1.CatalogService/ListServices`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status).to.equal(200);
    });

    it("oversized request headers: 431", async () => {
      const { received } = await rawUntilClosed(srv.url, `GET /v1/services HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(70 * 1024)}\r\nConnection: close\r\n\r\n`);
      expect(received).to.match(/^HTTP\/1\.1 431 /);
    });
  });

  describe("slow clients", () => {
    it("a client trickling its headers is cut off by the headers timeout (408, connection closed)", async () => {
      const trickle = Array.from({ length: 150 }, (_, i) => `X-Slow-${i}: y\r\n`);
      const r = await rawUntilClosed(srv.url, "GET /v1/services HTTP/1.1\r\nHost: x\r\n", trickle, 100);
      expect(r.closedByServer).to.equal(true);
      expect(r.received).to.match(/^HTTP\/1\.1 408 /);
    });

    it("a connection that never sends a byte, or only part of the HTTP/2 preface, is closed", async () => {
      const silent = await rawUntilClosed(srv.url, "");
      expect(silent).to.deep.equal({ closedByServer: true, received: "" });
      const partial = await rawUntilClosed(srv.url, "PRI * HTTP/2.0\r\n");
      expect(partial.closedByServer).to.equal(true);
    });

    it("an HTTP/2 session that opens no stream is closed", async () => {
      const session = http2.connect(srv.url);
      session.on("error", () => {});
      const closed = await new Promise<boolean>((resolve) => {
        const giveUp = setTimeout(() => resolve(false), 20_000); // safety net only
        session.on("close", () => {
          clearTimeout(giveUp);
          resolve(true);
        });
      });
      session.destroy();
      expect(closed).to.equal(true);
    });

    it("a prompt client on the same server is served", async () => {
      expect((await fetch(`${srv.url}/v1/health`)).status).to.equal(200);
    });
  });

  describe("CORS", () => {
    const origin = "https://evil.example";

    it("public reads: any origin, no credentials, the x402 headers exposed", async () => {
      for (const path of ["/v1/services", "/v1/rules", "/v1/health", "/v1/openapi.json", "/.well-known/agent-card.json", "/v1/proofs/keys", "/facilitator/supported"]) {
        const res = await fetch(`${srv.url}${path}`, { headers: { origin } });
        expect(res.headers.get("access-control-allow-origin"), path).to.equal("*");
        expect(res.headers.get("access-control-allow-credentials"), path).to.equal(null);
      }
      const pre = await fetch(`${srv.url}/v1/services`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET" } });
      expect(pre.status).to.equal(204);
      expect(pre.headers.get("access-control-allow-origin")).to.equal("*");
      expect(pre.headers.get("access-control-allow-methods")).to.equal("GET, HEAD");
    });

    it("paid calls and other writes: no CORS headers for an origin that is not listed", async () => {
      const pre = await fetch(`${srv.url}/v1/services/agent.trust-badge`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, payment-signature" } });
      expect(pre.status).to.equal(204);
      expect(pre.headers.get("access-control-allow-origin")).to.equal(null);
      const res = await fetch(`${srv.url}/v1/agents/register`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: "{}" });
      expect(res.headers.get("access-control-allow-origin")).to.equal(null);
      expect(res.headers.get("vary")).to.contain("Origin");
    });

    it("CORS_ORIGINS: listed origins may make paid calls and read the x402 challenge and receipt headers", async () => {
      const o = "https://wallet.example";
      const pre = await fetch(`${listed.url}/v1/services/agent.trust-badge`, { method: "OPTIONS", headers: { origin: o, "access-control-request-method": "POST", "access-control-request-headers": "content-type, payment-signature" } });
      expect(pre.status).to.equal(204);
      expect(pre.headers.get("access-control-allow-origin")).to.equal(o);
      expect(pre.headers.get("access-control-allow-methods")).to.contain("POST");
      expect(pre.headers.get("access-control-allow-headers")).to.contain("payment-signature");
      expect(pre.headers.get("access-control-allow-credentials")).to.equal(null);
      const challenge = await fetch(`${listed.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { origin: o, "content-type": "application/json" }, body: JSON.stringify({ subject: "0x1111111111111111111111111111111111111111" }) });
      expect(challenge.status).to.equal(402);
      expect(challenge.headers.get("access-control-allow-origin")).to.equal(o);
      const exposed = challenge.headers.get("access-control-expose-headers")!.split(/,\s*/);
      expect(exposed).to.include.members(["payment-required", "payment-response", "x-payment-response"]);
      const connect = await fetch(`${listed.url}/svc.catalog.v1.CatalogService/ListServices`, { method: "OPTIONS", headers: { origin: "http://localhost:5173", "access-control-request-method": "POST", "access-control-request-headers": "content-type, connect-protocol-version" } });
      expect(connect.headers.get("access-control-allow-origin")).to.equal("http://localhost:5173");
      const other = await fetch(`${listed.url}/v1/services/agent.trust-badge`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
      expect(other.headers.get("access-control-allow-origin")).to.equal(null);
    });

    it("never: operator routes, facilitator verify/settle; /mcp keeps its own Origin guard", async () => {
      for (const path of ["/v1/admin/payouts", "/facilitator/settle"]) {
        const res = await fetch(`${listed.url}${path}`, { method: "OPTIONS", headers: { origin: "https://wallet.example", "access-control-request-method": "POST" } });
        expect(res.headers.get("access-control-allow-origin"), path).to.equal(null);
      }
      const mcp = await fetch(`${listed.url}/mcp`, { method: "POST", headers: { origin: "https://wallet.example", "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) });
      expect(mcp.status).to.equal(403);
      expect(mcp.headers.get("access-control-allow-origin")).to.equal(null);
    });

    it("refuses a malformed CORS_ORIGINS at start", async () => {
      const { loadConfig } = await import("../../../src/config.js");
      expect(() => loadConfig({ CORS_ORIGINS: "wallet.example" })).to.throw(/CORS_ORIGINS/);
      expect(() => loadConfig({ CORS_ORIGINS: "https://wallet.example/path" })).to.throw(/CORS_ORIGINS/);
      expect(loadConfig({ CORS_ORIGINS: "*" }).corsOrigins).to.deep.equal(["*"]);
    });
  });

  describe("security headers", () => {
    it("the passport page: strict CSP (no inline script, the stylesheet by hash), nosniff, no referrer, no framing", async () => {
      const agent = await registerAgent(srv);
      const res = await fetch(`${srv.url}/a2a/passport/${agent.name}`);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.contain("text/html");
      const html = await res.text();
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).to.contain("default-src 'none'").and.contain("frame-ancestors 'none'").and.contain("base-uri 'none'");
      expect(csp).to.not.contain("unsafe-inline");
      expect(csp).to.not.match(/script-src/);
      const style = /<style>([^<]*)<\/style>/.exec(html)![1]!;
      expect(csp).to.contain(`style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`);
      expect(html).to.not.contain("<script");
      expect(res.headers.get("x-content-type-options")).to.equal("nosniff");
      expect(res.headers.get("x-frame-options")).to.equal("DENY");
      expect(res.headers.get("referrer-policy")).to.equal("no-referrer");
    });

    it("over HTTP/2 (h2c) too: security and CORS headers on the same routes", async () => {
      const session = http2.connect(srv.url);
      try {
        const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
          const req = session.request({ ":path": "/v1/services", origin: "https://evil.example" });
          req.on("response", resolve);
          req.on("error", reject);
          req.resume();
          req.end();
        });
        expect(headers[":status"]).to.equal(200);
        expect(headers["x-content-type-options"]).to.equal("nosniff");
        expect(headers["content-security-policy"]).to.contain("frame-ancestors 'none'");
        expect(headers["access-control-allow-origin"]).to.equal("*");
      } finally {
        session.destroy();
      }
    });

    it("every other response (REST JSON, markdown, errors, Connect, fronts): nosniff, no framing, nothing loadable", async () => {
      const responses = [
        await fetch(`${srv.url}/v1/services`),
        await fetch(`${srv.url}/v1/skill.md`),
        await fetch(`${srv.url}/no/such/route`),
        await fetch(`${srv.url}/svc.catalog.v1.CatalogService/ListServices`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
        await fetch(`${srv.url}/a2a/jsonrpc`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
      ];
      for (const res of responses) {
        expect(res.headers.get("x-content-type-options"), res.url).to.equal("nosniff");
        expect(res.headers.get("x-frame-options"), res.url).to.equal("DENY");
        expect(res.headers.get("content-security-policy"), res.url).to.contain("default-src 'none'");
      }
    });
  });
});

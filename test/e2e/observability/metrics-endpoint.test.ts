import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AppMetrics } from "../../../src/platform/metrics/app-metrics.js";
import { observedHttp } from "../../../src/platform/metrics/observed-http.js";
import { routeLabeler } from "../../../src/platform/metrics/route-label.js";

// The /metrics endpoint on its own: open by default, Bearer METRICS_TOKEN when set; per-app registries
// (two apps in one process count separately); route labels stay bounded.

async function serve(metrics: AppMetrics, metricsToken?: string) {
  const routeOf = routeLabeler({
    restTemplate: (_m, p) => (p.startsWith("/v1/things/") ? "/v1/things/{id}" : undefined),
    rpcPaths: new Set(["/svc.demo.v1.DemoService/Get"]),
    frontPrefixes: ["/mcp"],
  });
  const server = http.createServer(observedHttp((_req, res) => res.writeHead(204).end(), { metrics, routeOf, metricsToken }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("GET /metrics", () => {
  it("is open without METRICS_TOKEN and counts by route template, RPC path, front prefix or 'unmatched'", async () => {
    const metrics = new AppMetrics();
    const other = new AppMetrics();
    const a = await serve(metrics);
    const b = await serve(other);
    try {
      for (const p of ["/v1/things/1", "/v1/things/2", "/svc.demo.v1.DemoService/Get", "/mcp/x", "/random/a", "/random/b"]) await fetch(`${a.url}${p}`);
      const text = await (await fetch(`${a.url}/metrics`)).text();
      expect(text).to.contain('svc_http_requests_total{method="GET",route="/v1/things/{id}",status="204"} 2');
      expect(text).to.contain('svc_http_requests_total{method="GET",route="/svc.demo.v1.DemoService/Get",status="204"} 1');
      expect(text).to.contain('svc_http_requests_total{method="GET",route="/mcp",status="204"} 1');
      expect(text).to.contain('svc_http_requests_total{method="GET",route="unmatched",status="204"} 2');
      expect(text).not.to.contain("/random/");
      // The other app's registry saw none of it.
      const otherText = await (await fetch(`${b.url}/metrics`)).text();
      expect(otherText).not.to.contain("/v1/things/{id}");
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("with METRICS_TOKEN: 401 without or with a wrong bearer token, 200 with it; other routes unaffected", async () => {
    const token = "metrics-token-0123456789abcdef";
    const s = await serve(new AppMetrics(), token);
    try {
      const none = await fetch(`${s.url}/metrics`);
      expect(none.status).to.equal(401);
      expect(none.headers.get("www-authenticate")).to.equal("Bearer");
      expect((await fetch(`${s.url}/metrics`, { headers: { authorization: "Bearer wrong-token" } })).status).to.equal(401);
      const ok = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).to.equal(200);
      expect(await ok.text()).to.contain("# TYPE svc_http_requests_total counter");
      expect((await fetch(`${s.url}/v1/things/1`)).status).to.equal(204);
      expect((await fetch(`${s.url}/metrics`, { method: "POST", headers: { authorization: `Bearer ${token}` } })).status).to.equal(405);
    } finally {
      await s.close();
    }
  });
});

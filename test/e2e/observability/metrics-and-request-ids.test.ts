import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { loadConfig, type Config } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { loadCatalog } from "../../../src/catalog/catalog-config.js";
import { buildApp } from "../../../src/server.js";
import { listenOnePort } from "../../../src/platform/http/one-port-server.js";
import { startChain } from "../../../src/chain/chain-runtime.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { ServiceJobEntity } from "../../../src/jobs/service-job.entity.js";
import { WebhookEventEntity } from "../../../src/webhooks/webhook-event.entity.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";
import type { TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment } from "../../fixtures/buyer.js";
import { bearer, registerAgent } from "../../fixtures/agents.js";

// Observability end to end: GET /metrics after real traffic (a catalog read, a 402, a paid call), the
// request id carried from a request into its job row, the worker's log lines and a delivered webhook.

type Line = Record<string, any>;
const failFor = new Set<string>();
const json = { "content-type": "application/json" };

/** A callback receiver on loopback that records each delivery's headers. */
async function receiver() {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer(async (req, res) => {
    for await (const _ of req);
    seen.push(req.headers);
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hooks`, port, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The value of one sample of the exposition (`name{labels}`), labels in any order; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe("observability: /metrics, request ids into jobs, logs and webhooks", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let lines: Line[];
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let stop: () => Promise<void>;

  before(async () => {
    hooks = await receiver();
    lines = [];
    const base = loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", DEV_CHAIN_PERSIST: "false", ANCHOR_POLL_MS: "3600000", SAFE_FETCH_ALLOW: `127.0.0.1:${hooks.port}`, WEBHOOK_BACKOFF_BASE_MS: "100" });
    const config: Config = { ...base, database: testDatabaseConfig() };
    // Every log line is captured (JSON) to check which ids it carries.
    const log = createLogger("info", [], { write: (s: string) => void lines.push(JSON.parse(s)) });
    const ds = await openDataSource(config.database);
    const chain = await startChain(config, log);
    // agent.prehire-check (async) delivers a fixed deliverable: the test is about ids, not the engine.
    const handlers = new Map(skuHandlers(NO_AGENTS));
    // ...and fails for the wallets in `failFor` (so the job is refunded).
    const prehire: SkuHandler<any> = {
      ...handlers.get("agent.prehire-check")!,
      output: z.object({ checked: z.boolean() }),
      run: async (input: { subject: string }) => {
        if (failFor.has(input.subject.toLowerCase())) throw new Error("engine down");
        return { checked: true };
      },
    };
    handlers.set("agent.prehire-check", prehire);
    const app = buildApp({ config, log, ds, skus: loadCatalog(config.catalogFile), version: "test", chain, handlers });
    await app.start();
    const server = await listenOnePort(app.handler, 0, "127.0.0.1", config.http);
    stop = async () => {
      await server.close(1_000);
      await app.stop();
      await chain.close();
      await ds.destroy();
    };
    srv = { url: server.url, server, ds, config, chain, close: stop };
  });
  after(async () => {
    await stop();
    await hooks.close();
  });

  it("exposes request, RPC, payment, settlement, queue, webhook, breaker, pool and process metrics with route templates", async () => {
    const before = await (await fetch(`${srv.url}/metrics`)).text();
    const count = (text: string, name: string, labels: Record<string, string>) => sample(text, name, labels) ?? 0;

    expect((await fetch(`${srv.url}/v1/services`)).status).to.equal(200);
    const buyer = await newBuyer(srv);
    const body = { subject: buyer.address };
    const ch = await challengeOf(srv, "agent.trust-badge", body); // one 402
    const paid = await paidPost(srv, "agent.trust-badge", body, b64(await signV2Payment(buyer, ch.accepts[0])));
    expect(paid.status).to.equal(200);

    const res = await fetch(`${srv.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const delta = (name: string, labels: Record<string, string>) => count(text, name, labels) - count(before, name, labels);

    const route = "/v1/services/{sku_id}";
    expect(delta("svc_http_requests_total", { method: "GET", route: "/v1/services", status: "200" })).to.equal(1);
    expect(delta("svc_http_requests_total", { method: "POST", route, status: "402" })).to.equal(1);
    expect(delta("svc_http_requests_total", { method: "POST", route, status: "200" })).to.equal(1);
    expect(delta("svc_http_request_duration_seconds_count", { method: "POST", route, status: "200" })).to.equal(1);
    expect(sample(text, "svc_http_request_duration_seconds_bucket", { method: "POST", route, status: "200", le: "+Inf" })).to.be.at.least(1);
    // Raw paths never become labels.
    expect(text).not.to.contain('route="/v1/services/agent.trust-badge"');

    const rpc = { service: "svc.payment.v1.PaymentService", method: "CallService" };
    expect(delta("svc_rpc_requests_total", { ...rpc, code: "ok" })).to.equal(1);
    expect(delta("svc_rpc_requests_total", { ...rpc, code: "failed_precondition" })).to.equal(1);
    expect(delta("svc_rpc_duration_seconds_count", { service: "svc.catalog.v1.CatalogService", method: "ListServices", code: "ok" })).to.equal(1);

    expect(delta("svc_payments_total", { outcome: "challenged", reason: "" })).to.equal(1);
    expect(delta("svc_payments_total", { outcome: "settled", reason: "" })).to.equal(1);
    expect(delta("svc_settlement_duration_seconds_count", { result: "success" })).to.equal(1);
    expect(delta("svc_facilitator_verify_duration_seconds_count", { result: "valid" })).to.equal(1);

    // Scrape-time gauges (cluster-wide numbers from the database) and this process's pool.
    for (const state of ["queued", "pending", "running", "delivered", "failed", "refunded"]) expect(sample(text, "svc_jobs", { state }), state).to.be.a("number");
    expect(sample(text, "svc_webhook_backlog", { state: "pending" })).to.be.a("number");
    expect(sample(text, "svc_circuit_breakers", { state: "open" })).to.be.a("number");
    expect(sample(text, "svc_payment_effects_pending")).to.equal(0);
    expect(sample(text, "svc_db_pool_connections", { state: "total" })).to.be.at.least(1);
    expect(sample(text, "svc_db_pool_connections", { state: "waiting" })).to.be.a("number");
    // Default process metrics.
    expect(sample(text, "process_cpu_user_seconds_total")).to.be.a("number");
    expect(sample(text, "nodejs_eventloop_lag_seconds")).to.be.a("number");
  });

  it("counts refused payments with their reason", async () => {
    const before = await (await fetch(`${srv.url}/metrics`)).text();
    const buyer = await newBuyer(srv);
    const res = await paidPost(srv, "agent.trust-badge", { subject: buyer.address }, "not-base64-json");
    expect(res.status).to.be.within(400, 499);
    const after = await (await fetch(`${srv.url}/metrics`)).text();
    const labels = { outcome: "refused", reason: "payment_invalid" };
    expect((sample(after, "svc_payments_total", labels) ?? 0) - (sample(before, "svc_payments_total", labels) ?? 0)).to.equal(1);
  });

  it("counts a failed async job's refund as a refunded payment", async () => {
    const before = await (await fetch(`${srv.url}/metrics`)).text();
    const buyer = await newBuyer(srv);
    failFor.add(buyer.address.toLowerCase());
    const body = { subject: buyer.address };
    const ch = await challengeOf(srv, "agent.prehire-check", body);
    const res = await paidPost(srv, "agent.prehire-check", body, b64(await signV2Payment(buyer, ch.accepts[0])));
    expect(res.status).to.equal(200);
    const { job_id } = (await res.json()) as { job_id: string };
    await until(async () => ((await srv.ds.manager.findOneByOrFail(ServiceJobEntity, { jobId: job_id })).state === "refunded" ? true : undefined));
    const labels = { outcome: "refunded", reason: "" };
    const after = await until(async () => {
      const text = await (await fetch(`${srv.url}/metrics`)).text();
      return (sample(text, "svc_payments_total", labels) ?? 0) > (sample(before, "svc_payments_total", labels) ?? 0) ? text : undefined;
    });
    expect((sample(after, "svc_payments_total", labels) ?? 0) - (sample(before, "svc_payments_total", labels) ?? 0)).to.equal(1);
  });

  it("echoes a sane x-request-id, replaces an insane one, and makes one when none is sent", async () => {
    const sane = await fetch(`${srv.url}/v1/services`, { headers: { "x-request-id": "trace-abc.123" } });
    expect(sane.headers.get("x-request-id")).to.equal("trace-abc.123");
    const insane = await fetch(`${srv.url}/v1/services`, { headers: { "x-request-id": "has spaces and <tags>" } });
    expect(insane.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    const none = await fetch(`${srv.url}/v1/health/live`);
    expect(none.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
  });

  it("stores the request id on the job a paid call creates and carries it into the worker's log lines", async () => {
    const requestId = `req-${randomBytes(6).toString("hex")}`;
    const buyer = await newBuyer(srv);
    const body = { subject: buyer.address };
    const ch = await challengeOf(srv, "agent.prehire-check", body);
    const res = await fetch(`${srv.url}/v1/services/agent.prehire-check`, {
      method: "POST",
      headers: { ...json, "payment-signature": b64(await signV2Payment(buyer, ch.accepts[0])), "x-request-id": requestId },
      body: JSON.stringify(body),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get("x-request-id")).to.equal(requestId);
    const { job_id } = (await res.json()) as { job_id: string };
    const job = await srv.ds.manager.findOneByOrFail(ServiceJobEntity, { jobId: job_id });
    expect(job.requestId).to.equal(requestId);
    const delivered = await until(() => lines.find((l) => l.msg === "async job delivered" && l.jobId === job_id));
    expect(delivered.requestId).to.equal(requestId);
    // Background lines of other requests do not carry this id.
    expect(lines.filter((l) => l.requestId === requestId && l.jobId && l.jobId !== job_id)).to.deep.equal([]);
  });

  it("stores the request id on the webhook event a request causes and sends it as X-Request-Id on delivery", async () => {
    const requestId = `req-${randomBytes(6).toString("hex")}`;
    const me = await registerAgent(srv);
    const res = await fetch(`${srv.url}/a2a/agents/${me.agent_id}/callback`, {
      method: "POST",
      headers: { ...json, ...bearer(me.api_key), "x-request-id": requestId },
      body: JSON.stringify({ callback_url: hooks.url }),
    });
    expect(res.status).to.equal(200);
    const event = await srv.ds.manager.findOneByOrFail(WebhookEventEntity, { agentId: me.agent_id, eventType: "callback.test" });
    expect(event.requestId).to.equal(requestId);
    const delivery = await until(() => hooks.seen.find((h) => h["svc-event-id"] === event.eventId));
    expect(delivery["x-request-id"]).to.equal(requestId);
  });
});

import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { startTracing } from "../../../src/platform/tracing/tracing-setup.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment } from "../../fixtures/buyer.js";
import { bearer, registerAgent } from "../../fixtures/agents.js";

// Tracing hooks on the work that runs outside a request: with tracing on, an async paid call's job run
// and a webhook delivery each export their span, carrying the job's or the event's id.

describe("tracing hooks on background work (job runs, webhook deliveries)", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let hooks: http.Server;
  let hooksUrl: string;
  let exporter: InMemorySpanExporter;
  let tracing: { shutdown(): Promise<void> };

  before(async () => {
    hooks = http.createServer(async (req, res) => {
      for await (const _ of req);
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
    hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
    srv = await startTestServer({ WORKER_CONCURRENCY: "1", SAFE_FETCH_ALLOW: "127.0.0.1" });
    exporter = new InMemorySpanExporter();
    tracing = startTracing({ enabled: true, exporter })!;
  });
  after(async () => {
    await tracing?.shutdown();
    await srv?.close();
    await new Promise<void>((r) => hooks.close(() => r()));
  });

  async function spanOf(name: string, attribute: string, value: string) {
    for (let i = 0; i < 500; i++) {
      const found = exporter.getFinishedSpans().find((s) => s.name === name && s.attributes[attribute] === value);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 40));
    }
    throw new Error(`no ${name} span with ${attribute}=${value}; saw ${exporter.getFinishedSpans().map((s) => s.name).join(", ")}`);
  }

  it("exports a job.run span for the job an async paid call created", async () => {
    const buyer = await newBuyer(srv);
    const body = { subject: buyer.address };
    const ch = await challengeOf(srv, "agent.prehire-check", body);
    const res = await paidPost(srv, "agent.prehire-check", body, b64(await signV2Payment(buyer, ch.accepts[0])));
    expect(res.status).to.equal(200);
    const { job_id } = (await res.json()) as { job_id: string };
    const span = await spanOf("job.run", "svc.job_id", job_id);
    expect(span.attributes["svc.sku_id"]).to.equal("agent.prehire-check");
    expect(span.attributes["svc.attempt"]).to.equal(1);
  });

  it("exports a webhook.deliver span for a delivered callback event", async () => {
    const me = await registerAgent(srv);
    const res = await fetch(`${srv.url}/a2a/agents/${me.agent_id}/callback`, {
      method: "POST",
      headers: bearer(me.api_key),
      body: JSON.stringify({ callback_url: hooksUrl }),
    });
    expect(res.status).to.equal(200);
    const span = await spanOf("webhook.deliver", "svc.event_type", "callback.test");
    expect(span.attributes["svc.event_id"]).to.be.a("string").and.not.equal("");
  });
});

import { expect } from "chai";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { startTracing } from "../../../src/platform/tracing/tracing-setup.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment } from "../../fixtures/buyer.js";

// OpenTelemetry hooks: off by default (no provider: the API is a no-op and nothing is exported); on,
// a paid call yields the edge's server span, the RPC span and the gate's verify and settle spans, in
// one trace.

describe("tracing hooks", function () {
  this.timeout(120_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ WORKER_CONCURRENCY: "0" });
  });
  after(() => srv.close());

  async function paidCall(): Promise<void> {
    const buyer = await newBuyer(srv);
    const body = { subject: buyer.address };
    const ch = await challengeOf(srv, "agent.trust-badge", body);
    const res = await paidPost(srv, "agent.trust-badge", body, b64(await signV2Payment(buyer, ch.accepts[0])));
    expect(res.status).to.equal(200);
  }

  it("on: a paid call exports server, RPC, verify and settle spans in one trace", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ enabled: true, exporter })!;
    let spans;
    try {
      await paidCall();
      // The edge's span ends when the response has finished; read before shutdown (it empties the exporter).
      for (let i = 0; i < 100 && !exporter.getFinishedSpans().some((s) => s.name === "POST /v1/services/{sku_id}" && s.attributes["http.response.status_code"] === 200); i++) await new Promise((r) => setTimeout(r, 20));
      spans = exporter.getFinishedSpans();
    } finally {
      await tracing.shutdown();
    }
    const named = (name: string) => spans.filter((s) => s.name === name);
    const server = named("POST /v1/services/{sku_id}").find((s) => s.attributes["http.response.status_code"] === 200)!;
    expect(server, spans.map((s) => s.name).join(", ")).to.not.equal(undefined);
    const trace = server.spanContext().traceId;
    const inTrace = (name: string) => named(name).filter((s) => s.spanContext().traceId === trace);
    expect(inTrace("svc.payment.v1.PaymentService/CallService")).to.have.length(1);
    expect(inTrace("x402.verify")).to.have.length(1);
    expect(inTrace("x402.settle")).to.have.length(1);
    expect(inTrace("x402.settle")[0]!.attributes["svc.transaction"]).to.match(/^0x[0-9a-f]{64}$/);
    expect(server.resource.attributes["service.name"]).to.equal("svc");
    // The unpaid first call too: with tracing on, the challenge fast path leaves it to the edge, which spans it.
    const challenged = named("POST /v1/services/{sku_id}").find((s) => s.attributes["http.response.status_code"] === 402);
    expect(challenged, "the 402 challenge's server span").to.not.equal(undefined);
    expect(named("svc.payment.v1.PaymentService/CallService").filter((s) => s.spanContext().traceId === challenged!.spanContext().traceId)).to.have.length(1);
  });

  it("off (the default): nothing is registered and a paid call exports no span", async () => {
    expect(startTracing({ enabled: false })).to.equal(undefined);
    const exporter = new InMemorySpanExporter();
    const off = startTracing({ enabled: false, exporter });
    expect(off).to.equal(undefined);
    await paidCall();
    expect(exporter.getFinishedSpans()).to.deep.equal([]);
    // The API is the no-op: spans made now record nothing and have no valid context.
    const span = trace.getTracer("svc").startSpan("probe");
    expect(span.isRecording()).to.equal(false);
    expect(trace.isSpanContextValid(span.spanContext())).to.equal(false);
    span.end();
  });
});

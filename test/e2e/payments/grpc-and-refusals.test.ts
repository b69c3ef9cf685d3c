import { expect } from "chai";
import { fromJson, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { PaymentService } from "../../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../../gen/svc/payment/v1/payment_pb.js";
import { PaymentRequiredSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { errorReason } from "../../../src/platform/rpc/errors.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

const json = { "content-type": "application/json" };

describe("paid calls over gRPC, free refusals, and refunds", function () {
  this.timeout(60_000);
  let srv: TestServer;
  let h2: Http2SessionManager;
  // Subjects the failing engine was run for: the database is shared with the run's other suites, so this
  // server's worker may also claim a prehire-check job another suite left pending; only ours are counted.
  const engineRuns: string[] = [];

  before(async () => {
    // The real engines, except that agent.prehire-check always fails after payment (to exercise refunds).
    const handlers = new Map(skuHandlers(NO_AGENTS));
    const real = handlers.get("agent.prehire-check")!;
    const failing: SkuHandler<any> = { ...real, run: async (input: { subject: string }) => { engineRuns.push(input.subject); throw new Error("upstream engine crashed"); } };
    handlers.set("agent.prehire-check", failing);
    const seal = handlers.get("attestation.single-use-seal")!;
    handlers.set("attestation.single-use-seal", { ...seal, run: async () => { throw new Error("seal store unavailable"); } });
    srv = await startTestServer({}, { handlers });
    h2 = new Http2SessionManager(srv.url);
  });
  after(async () => {
    h2.abort();
    await srv.close();
  });

  it("a generated gRPC client gets the PaymentRequired detail, pays with the payment in metadata, and gets the receipt header", async () => {
    const buyer = await newBuyer(srv);
    const client = createClient(PaymentService, createGrpcTransport({ baseUrl: srv.url, sessionManager: h2 }));
    const input = { subject: buyer.address };
    const err = await client.callService({ skuId: "agent.trust-badge", input }).catch((e) => ConnectError.from(e));
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).code).to.equal(Code.FailedPrecondition);
    expect(errorReason(err as ConnectError)).to.equal("payment_required");
    const required = (err as ConnectError).findDetails(PaymentRequiredSchema).find((d) => d.x402Version === 2)!;
    const payer = new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account));
    const payload = await payer.createPaymentPayload(toJson(PaymentRequiredSchema, required) as never);
    let receipt = "";
    const res = await client.callService(
      { skuId: "agent.trust-badge", input },
      { headers: { "payment-signature": encodePaymentSignatureHeader(payload) }, onHeader: (h) => (receipt = h.get("payment-response") ?? "") },
    );
    expect(res.status).to.equal(CallStatus.DELIVERED);
    expect(res.paymentProof?.txHash).to.match(/^0x[0-9a-f]{64}$/);
    expect(decodePaymentResponseHeader(receipt).transaction).to.equal(res.paymentProof!.txHash);
    expect(fromJson(PaymentRequiredSchema, toJson(PaymentRequiredSchema, required)).accepts[0]!.amount).to.equal("10000");
  });

  it("the retired SKU answers insufficient_subject with no challenge and no charge", async () => {
    const res = await fetch(`${srv.url}/v1/services/prediction.service`, { method: "POST", headers: json, body: "{}" });
    expect(res.status).to.equal(200);
    expect(res.headers.get("payment-required")).to.equal(null);
    expect(await res.json()).to.include({ status: "insufficient_subject", charged: false });
  });

  it("an unresolvable subject answers insufficient_subject before any challenge", async () => {
    const res = await fetch(`${srv.url}/v1/services/reputation.lookup`, { method: "POST", headers: json, body: JSON.stringify({ task: "agent_id: nobody-here" }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get("payment-required")).to.equal(null);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).to.include({ status: "insufficient_subject", charged: false });
    expect(body.reason).to.contain("nobody-here");
  });

  it("bad input is a 400 naming the field, before any challenge", async () => {
    const res = await fetch(`${srv.url}/v1/services/reputation.lookup`, { method: "POST", headers: json, body: JSON.stringify({ task: "who is best?" }) });
    expect(res.status).to.equal(400);
    expect(res.headers.get("payment-required")).to.equal(null);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).to.equal("invalid_input");
    expect(body.error.message).to.contain("task");
  });

  it("an unknown SKU is a 404", async () => {
    const res = await fetch(`${srv.url}/v1/services/nope.nothing`, { method: "POST", headers: json, body: "{}" });
    expect(res.status).to.equal(404);
    expect(await res.json()).to.have.nested.property("error.code", "sku_not_found");
  });

  it("a sync engine that fails after verification answers 503 service_failed and charges nothing", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const { wrapFetchWithPayment, x402Client: FetchClient } = await import("@x402/fetch");
    const pay = wrapFetchWithPayment(fetch, new FetchClient().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const res = await pay(`${srv.url}/v1/services/attestation.single-use-seal`, { method: "POST", headers: json, body: JSON.stringify({ producer: "p", content: "x" }) });
    expect(res.status).to.equal(503);
    expect(await res.json()).to.have.nested.property("error.code", "service_failed");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
    expect((await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address })).state).to.equal("failed");
  });

  it("an async job that fails after settlement is retried, then refunded on-chain, and the refund is recorded", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const { wrapFetchWithPayment, x402Client: FetchClient } = await import("@x402/fetch");
    const pay = wrapFetchWithPayment(fetch, new FetchClient().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const res = await pay(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
    expect(res.status).to.equal(200);
    const { job_id } = (await res.json()) as { job_id: string };
    let result: Record<string, any> = {};
    // pending while attempts remain, failed while the refund is on its way, then refunded
    for (let i = 0; i < 200 && result.status !== "refunded"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      result = (await (await fetch(`${srv.url}/v1/services/result/${job_id}`)).json()) as Record<string, any>;
    }
    expect(result.status).to.equal("refunded");
    expect(result.error).to.contain("upstream engine crashed");
    expect(result.refund_tx_hash).to.match(/^0x[0-9a-f]{64}$/);
    expect(engineRuns.filter((s) => s === buyer.address)).to.have.length(3);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
    const payment = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { jobId: job_id });
    expect(payment.state).to.equal("refunded");
    await expectLedgerConsistent(srv.ds);
  });
});

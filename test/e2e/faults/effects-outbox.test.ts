import { expect } from "chai";
import type { JsonObject } from "@bufbuild/protobuf";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import { SealEntity } from "../../../src/skus/seal.entity.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { LedgerEntryEntity } from "../../../src/ledger/ledger.entity.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { X402PaymentEffectEntity } from "../../../src/x402/payment-effect.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

type Json = Record<string, any>;

// A settled payment whose lasting effect (SkuHandler.commit) keeps failing is still recorded: the
// transfer was mined, so the payment is settled with its settlement proof and ledger entry, and the
// effect waits in the outbox until it lands, once.

describe("a settled payment whose effect fails is recorded, and the effect is retried until it lands", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let failing = true;
  let commits = 0;

  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    const seal = handlers.get("attestation.single-use-seal")! as SkuHandler<any>;
    handlers.set("attestation.single-use-seal", {
      ...seal,
      commit: async (m, deliverable: JsonObject, ctx) => {
        // Writes first, then fails: the savepoint must take the partial write back.
        await seal.commit!(m, deliverable, ctx);
        if (failing) throw new Error("effect store rejected the write");
        commits++;
      },
    });
    // SETTLE_TIMEOUT_MS 1 s: the background reconciler runs every second.
    srv = await startTestServer({ SETTLE_TIMEOUT_MS: "1000" }, { handlers });
  });
  after(() => srv.close());

  it("settles and records the payment once, queues the effect without its partial writes, then lands it exactly once", async () => {
    const buyer = await newBuyer(srv);
    const body = { producer: "p", content: "effect retried" };
    const accepted = (await challengeOf(srv, "attestation.single-use-seal", body)).accepts[0];
    const header = b64(await signV2Payment(buyer, accepted));
    const before = await usdcBalance(srv, buyer.address);

    const res = await paidPost(srv, "attestation.single-use-seal", body, header);
    const paid = (await res.json()) as Json;
    expect(res.status, JSON.stringify(paid)).to.equal(200);
    expect(paid.payment_proof.tx_hash).to.match(/^0x[0-9a-f]{64}$/);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - BigInt(accepted.amount));

    const row = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
    expect(row.state).to.equal("settled");
    expect(await srv.ds.manager.countBy(LedgerEntryEntity, { kind: "sku_sale", ref: row.paymentId })).to.equal(1);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { settlementRef: row.txHash! })).to.equal(1);
    // The effect's partial write was rolled back with its savepoint; the effect is queued.
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: paid.deliverable.seal_id })).to.equal(0);
    const queued = await srv.ds.manager.findOneByOrFail(X402PaymentEffectEntity, { paymentId: row.paymentId });
    expect(queued.lastError).to.contain("effect store rejected the write");
    await expectLedgerConsistent(srv.ds);

    // A replay returns the stored result and charges nothing more.
    const replay = await paidPost(srv, "attestation.single-use-seal", body, header);
    expect(replay.status).to.equal(200);
    expect(((await replay.json()) as Json).payment_proof.tx_hash).to.equal(paid.payment_proof.tx_hash);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - BigInt(accepted.amount));

    // Still failing: the effect stays queued with more attempts.
    for (let i = 0; i < 100; i++) {
      const r = await srv.ds.manager.findOneByOrFail(X402PaymentEffectEntity, { paymentId: row.paymentId });
      if (r.attempts >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await srv.ds.manager.findOneByOrFail(X402PaymentEffectEntity, { paymentId: row.paymentId })).attempts).to.be.at.least(2);
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: paid.deliverable.seal_id })).to.equal(0);

    // The store recovers: the background reconciler lands the effect, once.
    failing = false;
    for (let i = 0; i < 300 && (await srv.ds.manager.countBy(X402PaymentEffectEntity, { paymentId: row.paymentId })) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await srv.ds.manager.countBy(X402PaymentEffectEntity, { paymentId: row.paymentId })).to.equal(0);
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: paid.deliverable.seal_id })).to.equal(1);
    expect(commits).to.equal(1);
    const verified = await fetch(`${srv.url}/v1/seals/${paid.deliverable.seal_id}/verify`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ content: body.content }) });
    expect(await verified.json()).to.include({ matches: true });
    await new Promise((r) => setTimeout(r, 2_500)); // more reconciler passes change nothing
    expect(commits).to.equal(1);
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: paid.deliverable.seal_id })).to.equal(1);
    await expectLedgerConsistent(srv.ds);
  });
});

import { expect } from "chai";
import type { JsonObject } from "@bufbuild/protobuf";
import type { QueryRunner } from "typeorm";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import { SealEntity } from "../../../src/skus/seal.entity.js";
import { LedgerEntryEntity } from "../../../src/ledger/ledger.entity.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { PROOF_KIND } from "../../../src/proof/proof-recorder.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { X402PaymentEffectEntity } from "../../../src/x402/payment-effect.entity.js";
import { PaymentGate } from "../../../src/x402/payment-gate.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// The payments of one batch transaction are finalized together: the settling requests' finalizes of one
// event-loop turn share one database transaction (their effects, proofs and ledger entries commit together).
// When that shared transaction fails, each payment is finalized on its own: every payer is still charged once,
// with one settlement proof, one ledger entry and its effect landed once. The same holds when another
// writer (the reconciler) settled one payment of the group first: the group's one UPDATE moves fewer rows
// than it holds, and each payment is finalized on its own.

const SKU = "attestation.single-use-seal";
const BATCH = 5;
type Json = Record<string, any>;

describe("grouped finalize: the payments of one settlement batch share one database transaction", function () {
  this.timeout(120_000);
  let srv: TestServer;
  /** The database transaction each effect ran in, in order (numbered as they start: see before()). */
  const runners: number[] = [];
  let txns = 0;
  let restore = () => {};
  /** Fail the second effect of a shared transaction once, with an error that dooms the transaction. */
  let failInGroup = false;
  let failed = 0;

  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    const seal = handlers.get(SKU)! as SkuHandler<any>;
    handlers.set(SKU, {
      ...seal,
      commit: async (m, deliverable: JsonObject, ctx) => {
        const txn = (m.queryRunner as QueryRunner & { txn: number }).txn;
        runners.push(txn);
        if (failInGroup && runners.filter((r) => r === txn).length === 2) {
          failInGroup = false;
          failed++;
          throw Object.assign(new Error("Lock wait timeout exceeded"), { code: "ER_LOCK_WAIT_TIMEOUT" });
        }
        await seal.commit!(m, deliverable, ctx);
      },
    });
    // A long window with a size cap: the batch is sent when it holds BATCH items (no timing assumption).
    srv = await startTestServer({ SETTLE_BATCH_WINDOW_MS: "1500", SETTLE_BATCH_MAX: String(BATCH), SETTLE_BATCH_EAGER: "false" }, { handlers });
    // Numbers each outermost transaction on its query runner (SQLite shares one runner, one transaction at a time;
    // MySQL/MariaDB give each transaction its own), so an effect can tell which transaction it runs in.
    const probe = srv.ds.createQueryRunner();
    const proto = Object.getPrototypeOf(probe) as QueryRunner;
    await probe.release();
    const start = proto.startTransaction;
    proto.startTransaction = async function (this: QueryRunner & { txn: number }, ...args: Parameters<QueryRunner["startTransaction"]>) {
      if (!this.isTransactionActive) this.txn = ++txns;
      return start.apply(this, args);
    };
    restore = () => (proto.startTransaction = start);
  });
  after(async () => {
    restore();
    await srv.close();
  });

  async function payBatch(tag: string) {
    const buyers = await Promise.all(Array.from({ length: BATCH }, () => newBuyer(srv)));
    const bodies = buyers.map((_, i) => ({ producer: "grouped", content: `${tag} ${i}` }));
    const accepted = (await challengeOf(srv, SKU, bodies[0])).accepts[0];
    const before = await Promise.all(buyers.map((b) => usdcBalance(srv, b.address)));
    const results = await Promise.all(
      buyers.map(async (b, i) => {
        const res = await paidPost(srv, SKU, bodies[i], b64(await signV2Payment(b, accepted)));
        return { status: res.status, body: (await res.json()) as Json };
      }),
    );
    expect(results.map((r) => r.status), JSON.stringify(results.find((r) => r.status !== 200)?.body)).to.deep.equal(Array(BATCH).fill(200));
    expect(new Set(results.map((r) => r.body.payment_proof.tx_hash)).size, "one batch transaction").to.equal(1);
    for (const [i, b] of buyers.entries()) expect(await usdcBalance(srv, b.address)).to.equal(before[i]! - BigInt(accepted.amount));
    for (const { body } of results) {
      const payment = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { txHash: body.payment_proof.tx_hash, batchIndex: body.payment_proof.batch_index });
      expect(payment.state).to.equal("settled");
      expect(await srv.ds.manager.countBy(LedgerEntryEntity, { kind: "sku_sale", ref: payment.paymentId })).to.equal(1);
      const ref = `${body.payment_proof.tx_hash}:${body.payment_proof.batch_index}`;
      expect(await srv.ds.manager.countBy(ProofRecordEntity, { kind: PROOF_KIND.settledOutcome, settlementRef: ref })).to.equal(1);
      expect(await srv.ds.manager.countBy(SealEntity, { sealId: body.deliverable.seal_id }), "the effect landed once").to.equal(1);
      expect(await srv.ds.manager.countBy(X402PaymentEffectEntity, { paymentId: payment.paymentId })).to.equal(0);
    }
    await expectLedgerConsistent(srv.ds);
  }

  it("runs the effects of one batch's payments in one transaction, each payment recorded once", async () => {
    runners.length = 0;
    await payBatch("shared");
    expect(runners).to.have.length(BATCH);
    expect(new Set(runners).size, "one shared transaction").to.equal(1);
  });

  it("finalizes each payment alone when another writer settled one of the group first, still exactly once", async () => {
    type Group = { paymentId: string; txHash: string; batchIndex: number | null }[];
    type Internals = { finalizeGroup: Group; finalize: PaymentGate["finalize"] };
    const gateProto = PaymentGate.prototype as unknown as { flushFinalizeGroup(this: Internals): Promise<void> };
    const flush = gateProto.flushFinalizeGroup;
    let raced = 0;
    // Before the group's transaction starts, its first payment is settled the reconciler's way (finalize without
    // what the request knows: the guarded transition, its proof and ledger entry in a transaction of its own).
    gateProto.flushFinalizeGroup = async function () {
      const [first] = this.finalizeGroup;
      if (this.finalizeGroup.length > 1 && raced === 0) {
        raced++;
        await this.finalize(first!.paymentId, first!.txHash, first!.batchIndex);
      }
      return flush.call(this);
    };
    try {
      runners.length = 0;
      await payBatch("raced");
    } finally {
      gateProto.flushFinalizeGroup = flush;
    }
    expect(raced).to.equal(1);
    // The reconciler's finalize ran the first effect; the group's statement found one row gone before any effect ran.
    expect(runners).to.have.length(BATCH);
    expect(new Set(runners).size, "each payment in its own transaction").to.equal(BATCH);
  });

  it("finalizes each payment alone when the shared transaction fails, still exactly once", async () => {
    runners.length = 0;
    failInGroup = true;
    await payBatch("fallback");
    expect(failed).to.equal(1);
    // Two effects ran in the failed shared transaction; then each payment's own transaction ran its effect.
    expect(runners).to.have.length(2 + BATCH);
    expect(new Set(runners.slice(2)).size).to.equal(BATCH);
  });
});

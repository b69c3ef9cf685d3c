import { expect } from "chai";
import { randomBytes } from "node:crypto";
import type { DataSource } from "typeorm";
import { openDataSource, runMigrations } from "../../../src/platform/db/data-source.js";
import { PaymentStore } from "../../../src/x402/payment-store.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// The settlement hash of every item of one batch transaction is recorded by one coalesced UPDATE:
// each payment gets the hash with its own index, and only while it is `settling` (a payment already
// finalized keeps the hash its finalize recorded).

const hex = (n: number) => `0x${randomBytes(n).toString("hex")}`;

describe("PaymentStore.setTxHash", function () {
  let ds: DataSource;
  let store: PaymentStore;

  before(async () => {
    ds = await openDataSource(testDatabaseConfig());
    await runMigrations(ds);
    store = new PaymentStore(ds);
  });
  // Its rows are bookkeeping only (a `settled` one without a sale in the ledger): removed, so a later suite's
  // ledger check on the same database does not depend on the order files run in.
  after(async () => {
    await ds?.manager.delete(X402PaymentEntity, { skuId: "test.sku" });
    await ds?.destroy();
  });

  async function payment(state: "verifying" | "settling" | "settled") {
    const claim = await store.claim({ network: "eip155:84532", asset: hex(20), payer: hex(20), nonce: hex(32), skuId: "test.sku", amount: 10_000n, x402Version: 2, payloadJson: "{}", requirementsJson: "{}" });
    if (!claim.claimed) throw new Error("not claimed");
    const id = claim.payment.paymentId;
    if (state !== "verifying") expect(await store.transition(id, ["verifying"], "settling", { responseJson: "{}" })).to.equal(true);
    if (state === "settled") expect(await store.transition(id, ["settling"], "settled", { txHash: `0x${"ab".repeat(32)}`, batchIndex: null })).to.equal(true);
    return id;
  }

  it("records one batch's hash for each settling payment with its own index, in one tick", async () => {
    const ids = [await payment("settling"), await payment("settling"), await payment("settling"), await payment("verifying")];
    const tx = hex(32);
    await Promise.all(ids.map((id, i) => store.setTxHash(id, tx, i)));
    const rows = await Promise.all(ids.map((id) => store.get(id)));
    expect(rows.slice(0, 3).map((r) => [r!.txHash, r!.batchIndex])).to.deep.equal([
      [tx, 0],
      [tx, 1],
      [tx, 2],
    ]);
    // Not sent by this process's settlement: nothing is recorded on it.
    expect([rows[3]!.txHash, rows[3]!.batchIndex]).to.deep.equal([null, null]);
  });

  it("records a lone settlement's hash without an index, and never overwrites a finalized payment's", async () => {
    const lone = await payment("settling");
    const settled = await payment("settled");
    const tx = hex(32);
    await Promise.all([store.setTxHash(lone, tx, null), store.setTxHash(settled, hex(32), 4)]);
    expect(await ds.manager.findOneByOrFail(X402PaymentEntity, { paymentId: lone })).to.include({ txHash: tx, batchIndex: null });
    expect(await ds.manager.findOneByOrFail(X402PaymentEntity, { paymentId: settled })).to.include({ txHash: `0x${"ab".repeat(32)}`, batchIndex: null, state: "settled" });
    // Alone in its tick: the single-row statement.
    const alone = await payment("settling");
    await store.setTxHash(alone, tx, 7);
    expect(await ds.manager.findOneByOrFail(X402PaymentEntity, { paymentId: alone })).to.include({ txHash: tx, batchIndex: 7 });
  });
});

import { createHash } from "node:crypto";
import { In, type DataSource, type EntityManager } from "typeorm";
import { isUniqueViolation } from "../platform/db/errors.js";
import { insertRows } from "../platform/db/raw-insert.js";
import { columnValue, execute } from "../platform/db/shared-sql.js";
import { newId } from "../platform/ids.js";
import { X402PaymentEntity, type PaymentState } from "./payment.entity.js";

// Exactly-once bookkeeping of x402 payments. A payment is (network, asset, payer, nonce); the unique
// key lets exactly one request claim it. Every state change is a guarded update (`WHERE state IN`)
// whose affected-row count says whether this caller won.

export function paymentKey(network: string, asset: string, payer: string, nonce: string): string {
  return createHash("sha256").update([network, asset, payer, nonce].map((s) => s.toLowerCase()).join("|")).digest("hex");
}

export interface NewPayment {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  skuId: string;
  amount: bigint;
  x402Version: number;
  payloadJson: string;
  requirementsJson: string;
}

export type Claim = { claimed: true; payment: X402PaymentEntity } | { claimed: false; existing: X402PaymentEntity };

/** States a payment ends in; anything else is in flight. */
export const FINAL_STATES: readonly PaymentState[] = ["rejected", "failed", "settled", "refunded"];
/** A payment that never moved money may be tried again with the same signed authorization. */
const RETRYABLE: PaymentState[] = ["rejected", "failed"];

type TxHashWrite = { paymentId: string; txHash: string; batchIndex: number | null; done(): void; fail(err: unknown): void };

/** Most rows one coalesced tx-hash UPDATE names. */
const TX_HASH_CHUNK = 200;

/** The fields a state transition may write besides the state. */
export type TransitionPatch = Partial<Pick<X402PaymentEntity, "txHash" | "batchIndex" | "responseJson" | "jobId" | "errorReason" | "refundTxHash" | "payloadJson" | "requirementsJson">>;

export class PaymentStore {
  private txHashWrites: TxHashWrite[] = [];

  constructor(private readonly ds: DataSource) {}

  async claim(p: NewPayment): Promise<Claim> {
    const key = paymentKey(p.network, p.asset, p.payer, p.nonce);
    const now = new Date();
    const row = this.ds.manager.create(X402PaymentEntity, {
      ...p,
      paymentId: newId("pay"),
      paymentKey: key,
      state: "verifying",
      responseJson: null,
      txHash: null,
      batchIndex: null,
      jobId: null,
      errorReason: null,
      refundTxHash: null,
      createTime: now,
      updateTime: now,
    });
    try {
      await insertRows(this.ds, X402PaymentEntity, [row]);
      return { claimed: true, payment: row };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const existing = await this.ds.manager.findOneByOrFail(X402PaymentEntity, { paymentKey: key });
    if (existing.skuId === p.skuId && RETRYABLE.includes(existing.state)) {
      const won = await this.transition(existing.paymentId, RETRYABLE, "verifying", { errorReason: null, payloadJson: p.payloadJson, requirementsJson: p.requirementsJson });
      if (won) return { claimed: true, payment: (await this.get(existing.paymentId))! };
    }
    return { claimed: false, existing };
  }

  /** Moves a payment from one of `from` to `to`; false when another writer got there first. */
  async transition(
    paymentId: string,
    from: readonly PaymentState[],
    to: PaymentState,
    patch: TransitionPatch = {},
    manager: EntityManager = this.ds.manager,
  ): Promise<boolean> {
    // Raw SQL, not the query builder: this runs twice per paid call and the builder's metadata work is
    // most of its CPU. The driver still converts each value as the entity declares it (dates, transformers).
    const meta = this.ds.getMetadata(X402PaymentEntity);
    const values: Record<string, unknown> = { ...patch, state: to, updateTime: new Date() };
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const [prop, v] of Object.entries(values)) {
      if (v === undefined) continue;
      const col = meta.findColumnWithPropertyName(prop)!;
      sets.push(`${col.databaseName} = ?`);
      params.push(this.ds.driver.preparePersistentValue(v, col));
    }
    params.push(paymentId, ...from);
    const sql = `UPDATE x402_payments SET ${sets.join(", ")} WHERE payment_id = ? AND state IN (${from.map(() => "?").join(", ")})`;
    return (await execute(this.ds, sql, params, manager)) === 1;
  }

  /**
   * Moves each of `rows` from one of `from` to `to` with its own patch (every patch with the same fields) in
   * one statement; returns how many moved. Fewer than `rows.length` means another writer got to some first:
   * the caller's transaction must not keep a partial result without knowing which ones.
   */
  async transitionMany(rows: { paymentId: string; patch: TransitionPatch }[], from: readonly PaymentState[], to: PaymentState, manager: EntityManager): Promise<number> {
    if (rows.length === 0) return 0;
    if (rows.length === 1) return (await this.transition(rows[0]!.paymentId, from, to, rows[0]!.patch, manager)) ? 1 : 0;
    const meta = this.ds.getMetadata(X402PaymentEntity);
    const sets = ["state = ?", "update_time = ?"];
    const params: unknown[] = [to, columnValue(this.ds, X402PaymentEntity, "updateTime", new Date())];
    const when = rows.map(() => "WHEN ? THEN ?").join(" ");
    for (const prop of Object.keys(rows[0]!.patch) as (keyof TransitionPatch)[]) {
      sets.push(`${meta.findColumnWithPropertyName(prop)!.databaseName} = CASE payment_id ${when} END`);
      params.push(...rows.flatMap((r) => [r.paymentId, columnValue(this.ds, X402PaymentEntity, prop, r.patch[prop] ?? null)]));
    }
    params.push(...rows.map((r) => r.paymentId), ...from);
    const sql = `UPDATE x402_payments SET ${sets.join(", ")} WHERE payment_id IN (${rows.map(() => "?").join(", ")}) AND state IN (${from.map(() => "?").join(", ")})`;
    return execute(this.ds, sql, params, manager);
  }

  /**
   * Records the settlement transaction hash (and index in a batch) as soon as it is known (before the
   * receipt), while the payment is still `settling` (a finalize got there first: nothing to add). The
   * calls made in one tick (every item of a batch transaction) share one UPDATE: one commit per batch.
   */
  setTxHash(paymentId: string, txHash: string, batchIndex: number | null = null): Promise<void> {
    return new Promise<void>((done, fail) => {
      if (this.txHashWrites.push({ paymentId, txHash, batchIndex, done, fail }) === 1) setImmediate(() => this.flushTxHashes());
    });
  }

  private flushTxHashes(): void {
    const writes = this.txHashWrites;
    this.txHashWrites = [];
    for (let i = 0; i < writes.length; i += TX_HASH_CHUNK) {
      const chunk = writes.slice(i, i + TX_HASH_CHUNK);
      this.writeTxHashes(chunk).then(
        () => chunk.forEach((w) => w.done()),
        (err) => chunk.forEach((w) => w.fail(err)),
      );
    }
  }

  private async writeTxHashes(writes: TxHashWrite[]): Promise<void> {
    // Raw SQL (the query builder's CPU is most of this write); the driver converts the timestamp.
    const updateTime = columnValue(this.ds, X402PaymentEntity, "updateTime", new Date());
    if (writes.length === 1) {
      const [w] = writes;
      await execute(this.ds, "UPDATE x402_payments SET tx_hash = ?, batch_index = ?, update_time = ? WHERE payment_id = ? AND state = 'settling'", [w!.txHash, w!.batchIndex, updateTime, w!.paymentId]);
      return;
    }
    const when = writes.map(() => "WHEN ? THEN ?").join(" ");
    const params: unknown[] = [
      ...writes.flatMap((w) => [w.paymentId, w.txHash]),
      ...writes.flatMap((w) => [w.paymentId, w.batchIndex]),
      updateTime,
      ...writes.map((w) => w.paymentId),
    ];
    await execute(
      this.ds,
      `UPDATE x402_payments SET tx_hash = CASE payment_id ${when} END, batch_index = CASE payment_id ${when} END, update_time = ? WHERE payment_id IN (${writes.map(() => "?").join(", ")}) AND state = 'settling'`,
      params,
    );
  }

  /** Records the refund transaction hash as soon as it is known (before the receipt). */
  async setRefundTxHash(paymentId: string, refundTxHash: string): Promise<void> {
    await this.ds.manager.update(X402PaymentEntity, { paymentId }, { refundTxHash, updateTime: new Date() });
  }

  /** The payment that paid for an async job, if any. */
  byJobId(jobId: string): Promise<X402PaymentEntity | null> {
    return this.ds.manager.findOneBy(X402PaymentEntity, { jobId });
  }

  get(paymentId: string, manager: EntityManager = this.ds.manager): Promise<X402PaymentEntity | null> {
    return manager.findOneBy(X402PaymentEntity, { paymentId });
  }

  findInStates(states: readonly PaymentState[]): Promise<X402PaymentEntity[]> {
    return this.ds.manager.findBy(X402PaymentEntity, { state: In([...states]) });
  }

  /** Waits until the payment leaves its in-flight states (another request is handling it). */
  async waitUntilFinal(paymentId: string, timeoutMs: number): Promise<X402PaymentEntity> {
    const deadline = Date.now() + timeoutMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const p = (await this.get(paymentId))!;
      if (FINAL_STATES.includes(p.state) || Date.now() > deadline) return p;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

import { createHash } from "node:crypto";
import { In, type DataSource, type EntityManager } from "typeorm";
import { isUniqueViolation } from "../platform/db/errors.js";
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

export class PaymentStore {
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
      jobId: null,
      errorReason: null,
      refundTxHash: null,
      createTime: now,
      updateTime: now,
    });
    try {
      await this.ds.manager.insert(X402PaymentEntity, row);
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
    patch: Partial<Pick<X402PaymentEntity, "txHash" | "responseJson" | "jobId" | "errorReason" | "refundTxHash" | "payloadJson" | "requirementsJson">> = {},
    manager: EntityManager = this.ds.manager,
  ): Promise<boolean> {
    const res = await manager.update(X402PaymentEntity, { paymentId, state: In([...from]) }, { ...patch, state: to, updateTime: new Date() });
    return (res.affected ?? 0) === 1;
  }

  /** Records the settlement transaction hash as soon as it is known (before the receipt). */
  async setTxHash(paymentId: string, txHash: string): Promise<void> {
    await this.ds.manager.update(X402PaymentEntity, { paymentId }, { txHash, updateTime: new Date() });
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

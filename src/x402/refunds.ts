import { encodeFunctionData, getAddress, type Address, type Hex, type TransactionReceipt } from "viem";
import type { DataSource } from "typeorm";
import { DEV_USDC } from "../chain/artifacts.js";
import { BroadcastError, type TransactionSender } from "../chain/tx-sender.js";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { knownToNode, parseSent, sentOutcome, takeTreasuryNonce, withSent, type SentRecord } from "../chain/sent-outcome.js";
import { newId } from "../platform/ids.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ACCOUNTS, postEntry } from "../ledger/ledger.js";
import type { PaymentStore } from "./payment-store.js";
import { X402PaymentEntity } from "./payment.entity.js";
import type { JobQueue } from "../jobs/job-queue.js";
import { feeSplit } from "./payment-gate.js";

// Refunds a settled payment on-chain from the treasury (an async job that failed after settlement).
// The payment moves settled -> refunding (guarded: one refund per payment) -> refunded with the sale
// reversed in the ledger. Across a cluster one server at a time sends a refund: it holds a lease on the
// payment row (refund_holder / refund_lease_until, taken by a guarded update, renewed while it sends);
// resume(), at start and periodically, takes only refunds whose lease ran out (a server that died holding
// one: resumed within leaseMs + the retry interval). Every signed refund is stored with its nonce before it is broadcast;
// before sending again the stored hashes are looked up on chain: a mined one is recorded, one that can
// still be mined (its nonce unused) is waited for (if the node dropped them all, their nonce is taken by a
// 0-value transfer to self), and only when none can (reverted, or the nonce taken by another transaction) is
// the refund sent again.

const TRANSFER_GAS = 100_000n;

/** Another server holds this refund's lease (it is sending it now). */
export class RefundInProgressError extends Error {}

/** The send failed without an answer and no hash was stored: it may have reached the node, so the lease is kept until it runs out. */
class UnknownUnrecorded extends Error {}


export class Refunder {
  /** This instance's name in refund_holder (one per process; tests run two in one process). */
  readonly holder = newId("rfd");
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Refunds this instance is sending now (the lease keeps other servers out; this keeps our own callers out). */
  private readonly sending = new Set<string>();

  constructor(
    private readonly ds: DataSource,
    private readonly store: PaymentStore,
    private readonly jobs: JobQueue,
    private readonly chain: ChainRuntime,
    private readonly treasurySender: TransactionSender | undefined,
    private readonly feeBps: number,
    /** How long a lease covers a send: at least the sender's timeout plus its resend window. */
    private readonly leaseMs = 5 * 60_000,
  ) {}

  get available(): boolean {
    return this.treasurySender !== undefined;
  }

  /** Returns the refund transaction hash. Throws RefundInProgressError when another live server is sending it. */
  async refund(paymentId: string): Promise<string> {
    if (!this.treasurySender) throw new Error("no treasury key is configured: the refund is owed but cannot be sent");
    const payment = (await this.store.get(paymentId))!;
    if (payment.state === "refunded") return payment.refundTxHash!;
    if (this.sending.has(paymentId)) throw new RefundInProgressError(`payment ${paymentId}'s refund is being sent by this server`);
    if (payment.state === "settled") {
      if (!(await this.lease(paymentId, "settled"))) return this.refund(paymentId);
    } else if (payment.state === "refunding") {
      if (!(await this.lease(paymentId, "refunding"))) throw new RefundInProgressError(`payment ${paymentId}'s refund is being sent by another server`);
    } else {
      throw new Error(`payment ${paymentId} is ${payment.state}: nothing to refund`);
    }
    this.sending.add(paymentId);
    const renew = setInterval(() => void this.renew(paymentId).catch(() => undefined), Math.max(50, Math.floor(this.leaseMs / 3)));
    renew.unref();
    let keepLease = false;
    try {
      return await this.sendOnce(paymentId);
    } catch (err) {
      keepLease = err instanceof UnknownUnrecorded;
      throw err;
    } finally {
      clearInterval(renew);
      this.sending.delete(paymentId);
      // Handing the lease back is safe once every broadcast is stored: the next holder looks them up first.
      if (!keepLease) await this.ds.manager.update(X402PaymentEntity, { paymentId, refundHolder: this.holder }, { refundLeaseUntil: null }).catch(() => undefined);
    }
  }

  /** Resumes refunds whose lease ran out (a crash, an unknown outcome); one pass. */
  async resume(): Promise<void> {
    const now = new Date();
    for (const p of await this.store.findInStates(["refunding"])) {
      if (p.refundLeaseUntil && p.refundLeaseUntil > now) continue;
      await this.refund(p.paymentId).catch(() => undefined);
    }
  }

  /** Runs resume() every `intervalMs` (a refund left by a server that died is picked up once its lease expires). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.resume().finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Guarded: takes the refund's lease if it is free or expired (settled: also moves it to refunding). */
  private async lease(paymentId: string, from: "settled" | "refunding"): Promise<boolean> {
    const now = new Date();
    const qb = this.ds
      .createQueryBuilder()
      .update(X402PaymentEntity)
      .set({ state: "refunding", refundHolder: this.holder, refundLeaseUntil: new Date(now.getTime() + this.leaseMs), updateTime: now });
    const res =
      from === "settled"
        ? await qb.where("payment_id = :paymentId AND state = 'settled'", { paymentId }).execute()
        : await qb
            .where("payment_id = :paymentId AND state = 'refunding' AND (refund_lease_until IS NULL OR refund_lease_until < :now)", { paymentId, now })
            .execute();
    return (res.affected ?? 0) === 1;
  }

  private async renew(paymentId: string): Promise<void> {
    await this.ds.manager.update(X402PaymentEntity, { paymentId, state: "refunding", refundHolder: this.holder }, { refundLeaseUntil: new Date(Date.now() + this.leaseMs) });
  }

  /** Under the lease: records a refund already mined, waits for one that can still be, else sends it. */
  private async sendOnce(paymentId: string): Promise<string> {
    const payment = (await this.store.get(paymentId))!;
    const sent = sentOf(payment);
    if (sent.hashes.length) {
      const outcome = await sentOutcome(this.chain.publicClient, this.treasurySender!.address, sent.hashes, sent.nonce);
      if (outcome.kind === "mined") return this.record(paymentId, outcome.receipt.transactionHash);
      if (outcome.kind === "pending") {
        // Dropped by the node (it knows none of them): take the nonce with a 0-value transfer to self. At most
        // one transaction per nonce is mined, so either the refund or the fill wins; after a fill it is resent.
        if (sent.nonce !== undefined && !(await knownToNode(this.chain.publicClient, sent.hashes))) await takeTreasuryNonce(this.chain, this.treasurySender!.address, sent.nonce).catch(() => undefined);
        throw new Error(`refund ${sent.hashes.join(", ")} is not mined yet`);
      }
      // None of them can be mined any more: nothing moved, so the refund is sent again.
      await this.ds.manager.update(X402PaymentEntity, { paymentId, refundHolder: this.holder }, { refundSentJson: null, refundTxHash: null });
    }
    const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [getAddress(payment.payer) as Address, payment.amount] });
    let receipt: TransactionReceipt;
    let stored = 0;
    try {
      // Each signed refund is stored with its nonce before it is broadcast (no crash window where a sent
      // refund is unknown); a hash stored but never broadcast leaves its nonce free, which sendOnce handles.
      const beforeBroadcast = async (hash: Hex, nonce: number) => {
        await this.remember(paymentId, hash, nonce);
        stored++;
      };
      receipt = await this.treasurySender!.send({ to: this.chain.network.usdcAddress, data, gas: TRANSFER_GAS, beforeBroadcast });
    } catch (err) {
      if (err instanceof BroadcastError) {
        // Nothing was broadcast (the node refused it, or it was never sent): forget the hash stored for it.
        if (stored) await this.ds.manager.update(X402PaymentEntity, { paymentId, refundHolder: this.holder }, { refundSentJson: null, refundTxHash: null });
        throw err;
      }
      if (!stored) throw new UnknownUnrecorded(`refund of ${paymentId}: outcome unknown and no hash stored; retried when the lease runs out: ${(err as Error).message}`, { cause: err });
      throw new Error(`refund of ${paymentId} sent but not confirmed (resumed from its stored hashes): ${(err as Error).message}`, { cause: err });
    }
    if (receipt.status !== "success") throw new Error(`refund transaction ${receipt.transactionHash} reverted`);
    return this.record(paymentId, receipt.transactionHash);
  }

  /** Stores a signed refund's hash (and, for the first, its nonce) before it is broadcast. Never skipped: a hash lost here could be sent twice. */
  private async remember(paymentId: string, hash: Hex, nonce: number): Promise<void> {
    const row = (await this.store.get(paymentId))!;
    const sent = withSent(sentOf(row), hash, nonce);
    // A database blip must not lose the hash: a few tries before the send fails with it unrecorded.
    for (let attempt = 1; ; attempt++) {
      let res;
      try {
        // Guarded by the lease: a holder whose lease another server took over stores nothing, so it broadcasts nothing.
        res = await this.ds.manager.update(X402PaymentEntity, { paymentId, state: "refunding", refundHolder: this.holder }, { refundSentJson: JSON.stringify(sent), refundTxHash: hash, updateTime: new Date() });
      } catch (err) {
        if (attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
        continue;
      }
      if ((res.affected ?? 0) !== 1) throw new Error(`refund of ${paymentId}: this server no longer holds its lease`);
      return;
    }
  }

  private async record(paymentId: string, refundTxHash: string): Promise<string> {
    const payment = (await this.store.get(paymentId))!;
    const { fee, payout } = feeSplit(payment.amount, this.feeBps);
    const provider = `svc:${payment.skuId.split(".")[0]}`;
    await runInTransaction(this.ds, async (m) => {
      if (!(await this.store.transition(paymentId, ["refunding"], "refunded", { refundTxHash }, m))) return;
      if (payment.jobId) await this.jobs.move(payment.jobId, ["refunding"], "refunded", { finishTime: new Date(), leaseUntil: null }, m);
      await postEntry(m, "sku_refund", paymentId, [
        { account: ACCOUNTS.treasuryUsdc, amount: -payment.amount },
        { account: ACCOUNTS.feeRevenue, amount: fee },
        { account: ACCOUNTS.providerPayable(provider), amount: payout },
      ]);
    });
    return refundTxHash;
  }
}

/** The stored broadcasts of a refund (a row written before refund_sent_json existed has only refund_tx_hash). */
function sentOf(p: X402PaymentEntity): SentRecord {
  if (p.refundSentJson) return parseSent(p.refundSentJson);
  return { hashes: p.refundTxHash ? [p.refundTxHash as Hex] : [] };
}

import { getAbiItem, type Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import { findSettlement } from "../chain/settlement-logs.js";
import type { Logger } from "../platform/log.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { X402PaymentEntity } from "./payment.entity.js";
import type { PaymentStore } from "./payment-store.js";

// Resolves payments caught in flight (a crash, a lost facilitator answer) against the chain, the source
// of truth: a mined settlement is finalized (proof, ledger, job released); an authorization that can
// no longer execute (unused and past its validBefore) is marked failed, nothing charged. Anything else
// is left alone: it may still be mined, or another live server may be handling it.

/** Blocks searched back for a settlement whose hash was never recorded (a remote facilitator's). */
const LOG_SEARCH_BLOCKS = 50_000n;

export interface ReconcilerDeps {
  store: PaymentStore;
  jobs: JobQueue;
  chain: ChainRuntime;
  /** Records a settlement (PaymentGate.finalize). */
  finalize: (paymentId: string, txHash: string, batchIndex: number | null) => Promise<unknown>;
  /** Retries settled payments' effects that failed (PaymentGate.retryEffects). */
  retryEffects?: () => Promise<number>;
  log: Logger;
}

export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;

  constructor(private readonly d: ReconcilerDeps) {}

  /**
   * Reconciles in the background every `intervalMs`: payments idle in flight for longer than `staleMs`
   * (a settlement whose answer was lost while the chain RPC, the facilitator or the database was away)
   * and queued effects. Every server runs it; each step is a guarded update, so running it twice is harmless.
   */
  start(intervalMs: number, staleMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.pass) return; // the previous pass is still running (a slow RPC)
      this.pass = this.runOnce(staleMs).finally(() => (this.pass = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.pass;
  }

  /** One background pass; an outage (database, chain) is logged and the next pass tries again. */
  async runOnce(staleMs: number): Promise<void> {
    try {
      const r = await this.reconcileAll(staleMs);
      if (r.finalized || r.failed) this.d.log.info(r, "payments reconciled");
      await this.d.retryEffects?.();
    } catch (err) {
      this.d.log.warn({ err }, "reconciliation pass failed; retrying on the next pass");
    }
  }

  /** Every in-flight payment idle for longer than `staleMs`; a failure on one row does not stop the others. */
  async reconcileAll(staleMs: number): Promise<{ finalized: number; failed: number }> {
    const cutoff = Date.now() - staleMs;
    const counts = { finalized: 0, failed: 0 };
    for (const p of await this.d.store.findInStates(["verifying", "running", "settling"])) {
      if (p.updateTime.getTime() > cutoff) continue;
      const outcome = await this.reconcile(p).catch((err) => void this.d.log.error({ err, paymentId: p.paymentId }, "reconcile failed"));
      if (outcome === "finalized") counts.finalized++;
      if (outcome === "failed") counts.failed++;
    }
    return counts;
  }

  async reconcile(p: X402PaymentEntity): Promise<"finalized" | "failed" | "left"> {
    const { chain, store, jobs, log } = this.d;
    const used = (await chain.publicClient.readContract({
      address: chain.network.usdcAddress,
      abi: DEV_USDC.abi,
      functionName: "authorizationState",
      args: [p.payer as Hex, p.nonce as Hex],
    })) as boolean;
    if (used) {
      const receiptOf = (hash: string | null | undefined) => (hash ? chain.publicClient.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined) : undefined);
      let receipt = await receiptOf(p.txHash);
      // The stored hash may be a re-send that was dropped: the event names the transaction that ran.
      // A batch transaction succeeds even when this item failed in it: it must carry THIS authorization's AuthorizationUsed.
      const usedIn = (r: typeof receipt) => r?.status === "success" && findSettlement(r.logs, chain.network.usdcAddress, p.payer as Hex, p.nonce as Hex).used;
      if (!usedIn(receipt)) receipt = await receiptOf(await this.findAuthorizationTx(p.payer as Hex, p.nonce as Hex));
      if (receipt && usedIn(receipt) && p.responseJson && p.state === "settling") {
        const { batchIndex } = findSettlement(receipt.logs, chain.network.usdcAddress, p.payer as Hex, p.nonce as Hex);
        await this.d.finalize(p.paymentId, receipt.transactionHash, batchIndex);
        log.info({ paymentId: p.paymentId, tx: receipt.transactionHash, batchIndex }, "reconciled: the settlement was mined; finalized");
        return "finalized";
      }
      log.warn({ paymentId: p.paymentId, state: p.state }, "reconcile: authorization used but not by a recorded settlement of this payment; left for an operator");
      return "left";
    }
    const validBefore = BigInt((JSON.parse(p.payloadJson) as { payload?: { authorization?: { validBefore?: string } } }).payload?.authorization?.validBefore ?? "0");
    if (BigInt(Math.floor(Date.now() / 1000)) <= validBefore) return "left"; // may still be mined
    if (await store.transition(p.paymentId, ["verifying", "running", "settling"], "failed", { errorReason: "interrupted" })) {
      if (p.jobId) await jobs.move(p.jobId, ["queued"], "failed", { error: "payment did not settle" });
      log.info({ paymentId: p.paymentId }, "reconciled: the authorization expired unused; marked failed, nothing charged");
      return "failed";
    }
    return "left";
  }

  /** The transaction that used (payer, nonce), from the token's AuthorizationUsed event. */
  private async findAuthorizationTx(payer: Hex, nonce: Hex): Promise<Hex | undefined> {
    const client = this.d.chain.publicClient;
    const latest = await client.getBlockNumber();
    const logs = (await client.getLogs({
      address: this.d.chain.network.usdcAddress,
      event: getAbiItem({ abi: DEV_USDC.abi, name: "AuthorizationUsed" }) as never,
      args: { authorizer: payer, nonce } as never,
      fromBlock: latest > LOG_SEARCH_BLOCKS ? latest - LOG_SEARCH_BLOCKS : 0n,
      toBlock: latest,
    })) as { transactionHash: Hex | null }[];
    return logs[0]?.transactionHash ?? undefined;
  }
}

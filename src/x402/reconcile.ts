import { getAbiItem, type Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
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
  finalize: (paymentId: string, txHash: string) => Promise<unknown>;
  log: Logger;
}

export class Reconciler {
  constructor(private readonly d: ReconcilerDeps) {}

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
      if (receipt?.status !== "success") receipt = await receiptOf(await this.findAuthorizationTx(p.payer as Hex, p.nonce as Hex));
      if (receipt?.status === "success" && p.responseJson && p.state === "settling") {
        await this.d.finalize(p.paymentId, receipt.transactionHash);
        log.info({ paymentId: p.paymentId, tx: receipt.transactionHash }, "reconciled: the settlement was mined; finalized");
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

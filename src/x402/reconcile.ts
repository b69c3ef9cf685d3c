import { getAbiItem, type Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import type { Logger } from "../platform/log.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { PaymentGate } from "./payment-gate.js";
import type { PaymentStore } from "./payment-store.js";

// Payments caught mid-flight by a crash are settled against the chain, the source of truth:
// a mined settlement is finalized (proof, ledger, job released); an authorization never executed is
// marked failed (nothing was charged). Only rows idle longer than `staleMs` are touched, so payments
// another live server is handling are left alone.

/** Blocks searched back for a settlement whose hash was never recorded (a remote facilitator's). */
const LOG_SEARCH_BLOCKS = 50_000n;

/** The transaction that used (payer, nonce), from the token's AuthorizationUsed event. */
async function findAuthorizationTx(chain: ChainRuntime, payer: Hex, nonce: Hex): Promise<Hex | undefined> {
  const latest = await chain.publicClient.getBlockNumber();
  const logs = (await chain.publicClient.getLogs({
    address: chain.network.usdcAddress,
    event: getAbiItem({ abi: DEV_USDC.abi, name: "AuthorizationUsed" }) as never,
    args: { authorizer: payer, nonce } as never,
    fromBlock: latest > LOG_SEARCH_BLOCKS ? latest - LOG_SEARCH_BLOCKS : 0n,
    toBlock: latest,
  })) as { transactionHash: Hex | null }[];
  return logs[0]?.transactionHash ?? undefined;
}

export async function reconcilePayments(opts: {
  store: PaymentStore;
  gate: PaymentGate;
  jobs: JobQueue;
  chain: ChainRuntime;
  skus: ReadonlyMap<string, SkuDefinition>;
  log: Logger;
  staleMs: number;
}): Promise<{ finalized: number; failed: number }> {
  const { store, gate, jobs, chain, skus, log } = opts;
  const cutoff = Date.now() - opts.staleMs;
  let finalized = 0;
  let failed = 0;
  for (const p of await store.findInStates(["verifying", "running", "settling"])) {
    if (p.updateTime.getTime() > cutoff) continue;
    const used = (await chain.publicClient.readContract({
      address: chain.network.usdcAddress,
      abi: DEV_USDC.abi,
      functionName: "authorizationState",
      args: [p.payer as Hex, p.nonce as Hex],
    })) as boolean;
    const txHash = p.txHash ?? (used ? await findAuthorizationTx(chain, p.payer as Hex, p.nonce as Hex) : undefined);
    const receipt = txHash ? await chain.publicClient.getTransactionReceipt({ hash: txHash as Hex }).catch(() => undefined) : undefined;
    if (used && receipt?.status === "success" && p.responseJson) {
      await gate.finalize(p.paymentId, skus.get(p.skuId)!, receipt.transactionHash, chain.network.caip2, p.payer);
      finalized++;
      log.info({ paymentId: p.paymentId, tx: receipt.transactionHash }, "reconciled: settlement was mined; finalized");
    } else if (!used) {
      await store.transition(p.paymentId, ["verifying", "running", "settling"], "failed", { errorReason: "interrupted" });
      if (p.jobId) await jobs.move(p.jobId, ["queued"], "failed", { error: "payment did not settle" });
      failed++;
      log.info({ paymentId: p.paymentId }, "reconciled: authorization never executed; marked failed, nothing charged");
    } else {
      log.warn({ paymentId: p.paymentId }, "reconcile: authorization used but its settlement transaction is unknown; left for an operator");
    }
  }
  return { finalized, failed };
}

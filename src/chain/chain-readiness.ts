import type { ReadinessCheck } from "../platform/db/readiness.js";
import type { ChainRuntime } from "./chain-runtime.js";

/** Whether the chain RPC answers (the block number) within its deadline. */
export async function chainReadiness(chain: ChainRuntime): Promise<ReadinessCheck> {
  const started = performance.now();
  try {
    await Promise.race([chain.publicClient.getBlockNumber({ cacheTime: 0 }), new Promise((_r, reject) => setTimeout(() => reject(new Error("no answer within 2000 ms")), 2_000).unref())]);
    return { name: "chain", ready: true, latencyMs: performance.now() - started, detail: "" };
  } catch (err) {
    return { name: "chain", ready: false, latencyMs: performance.now() - started, detail: (err as Error).message };
  }
}

import type { ReadinessCheck } from "../platform/db/readiness.js";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import type { Facilitator } from "./facilitator.js";

// Readiness of the payment facilitator. Remote (FACILITATOR_URL): its `/supported` answers within the
// deadline. Built-in: the chain answers and the facilitator key holds gas for at least one settlement
// (GAS_PER_SETTLEMENT at the current gas price), since without gas every settlement would fail.

const DEADLINE_MS = 2_000;
/** Gas of one transferWithAuthorization, rounded up (measured ~80k on the dev chain's FiatToken mirror). */
const GAS_PER_SETTLEMENT = 100_000n;

function withinDeadline<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_r, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function facilitatorReadiness(facilitator: Facilitator, chain: ChainRuntime): Promise<ReadinessCheck> {
  const started = performance.now();
  const result = (ready: boolean, detail: string): ReadinessCheck => ({ name: "facilitator", ready, latencyMs: performance.now() - started, detail });
  try {
    if (facilitator.kind === "remote") {
      await withinDeadline(facilitator.supported());
      return result(true, "");
    }
    const account = chain.facilitatorAccount;
    if (!account) return result(false, "the built-in facilitator has no key");
    const [balance, gasPrice] = await withinDeadline(Promise.all([chain.publicClient.getBalance({ address: account.address }), chain.publicClient.getGasPrice()]));
    const needed = GAS_PER_SETTLEMENT * gasPrice;
    if (balance === 0n || balance < needed) return result(false, `the facilitator key ${account.address} holds ${balance} wei of gas; one settlement needs about ${needed}`);
    return result(true, "");
  } catch (err) {
    return result(false, (err as Error).message.split("\n")[0]!.slice(0, 300));
  }
}

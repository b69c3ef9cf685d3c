import { createPublicClient, type Address, type Chain, type LocalAccount, type PublicClient } from "viem";
import { base, baseSepolia } from "viem/chains";
import type { Config } from "../config.js";
import type { Logger } from "../platform/log.js";
import { devAccounts } from "./dev-accounts.js";
import { accountFromKey } from "./native-account.js";
import { batchedHttp } from "./rpc-transport.js";
import { ensureDevContracts, startDevChain, type DevChain } from "./dev-chain.js";
import type { NetworkInfo } from "./networks.js";

// What the payment code needs from the chain: a read client, the treasury, and the keys this
// process sends with. The embedded dev chain when CHAIN_RPC_URL is unset.

export interface ChainRuntime {
  network: NetworkInfo;
  chain: Chain;
  rpcUrl: string;
  dev: boolean;
  publicClient: PublicClient;
  /** payTo of every challenge. */
  treasury: Address;
  /** Sends refunds; absent on a real chain without TREASURY_PRIVATE_KEY. */
  treasuryAccount: LocalAccount | undefined;
  /** Sends settlements for the built-in facilitator. */
  facilitatorAccount: LocalAccount | undefined;
  /** Mints test USDC (dev chain only). */
  faucetAccount: LocalAccount | undefined;
  close(): Promise<void>;
}

export function viemChain(network: NetworkInfo, rpcUrl: string): Chain {
  const known = network.key === "base" ? base : baseSepolia;
  return { ...known, rpcUrls: { default: { http: [rpcUrl] } } };
}

export function publicClientFor(chain: Chain, rpcUrl: string, dev: boolean): PublicClient {
  return createPublicClient({
    chain,
    // The requests of one event-loop turn go out as one JSON-RPC batch, and contract reads as one Multicall3 call.
    transport: batchedHttp(rpcUrl, { retryCount: 2, timeout: 15_000 }),
    batch: { multicall: { wait: 0 } },
    pollingInterval: dev ? 50 : 1_000,
  }) as PublicClient;
}

/**
 * Starts the chain runtime. With the embedded dev chain, `attachTo` joins a dev chain another process
 * (the server) already runs, instead of starting one: how `svc worker` shares the server's chain.
 */
export async function startChain(config: Config, log: Logger, attachTo?: string): Promise<ChainRuntime> {
  let devChain: DevChain | undefined;
  let rpcUrl = config.chainRpcUrl;
  let treasury = config.treasuryAddress;
  let treasuryAccount = config.treasuryPrivateKey ? accountFromKey(config.treasuryPrivateKey) : undefined;
  let facilitatorAccount = config.facilitatorPrivateKey ? accountFromKey(config.facilitatorPrivateKey) : undefined;
  let faucetAccount: LocalAccount | undefined;
  if (config.devChain) {
    const dev = devAccounts();
    if (attachTo) {
      rpcUrl = attachTo;
      await ensureDevContracts(rpcUrl, { network: config.network, minter: dev.faucet.address, identityRegistry: config.identityRegistryAddress, settlementBatcher: config.settlementBatcherAddress, log });
    } else {
      devChain = await startDevChain({ network: config.network, minter: dev.faucet.address, identityRegistry: config.identityRegistryAddress, settlementBatcher: config.settlementBatcherAddress, stateFile: config.devChainStateFile, log });
      rpcUrl = devChain.rpcUrl;
    }
    treasury = dev.treasury.address;
    treasuryAccount = dev.treasury;
    facilitatorAccount = dev.facilitator;
    faucetAccount = dev.faucet;
  }
  if (treasuryAccount && treasury && treasuryAccount.address.toLowerCase() !== treasury.toLowerCase()) {
    throw new Error("TREASURY_PRIVATE_KEY does not belong to TREASURY_ADDRESS");
  }
  const chain = viemChain(config.network, rpcUrl!);
  return {
    network: config.network,
    chain,
    rpcUrl: rpcUrl!,
    dev: config.devChain,
    publicClient: publicClientFor(chain, rpcUrl!, config.devChain),
    treasury: treasury!,
    treasuryAccount,
    facilitatorAccount,
    faucetAccount,
    close: async () => devChain?.stop(),
  };
}

import { createPublicClient, http, type PublicClient } from "viem";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { ChainConfig, PriceSource, PriceSourcesConfig } from "./price-sources.js";
import { readError, readSource, type SourceReading } from "./source-readers.js";
import { safeRpcFetch } from "./rpc-fetch.js";

// Reads a pair's sources on each configured chain through viem (http transport, every request through
// the safe fetcher). Per chain: eth_chainId is checked against the configuration, the block number is
// read once, and every source is read at that block so one chain's reads are consistent. A chain that
// does not answer is reported, never guessed. Successful chain reads are reused for `cacheMs`.

export interface SourceRead {
  source: PriceSource;
  reading?: SourceReading;
  error?: string;
}

export type ChainOutcome =
  | { ok: true; blockNumber: bigint; sources: SourceRead[] }
  | { ok: false; status: "unreachable" | "wrong_chain"; error: string };

export interface ChainRead {
  chain: ChainConfig;
  readAt: Date;
  cached: boolean;
  outcome: ChainOutcome;
}

/** The RPC's origin: what provenance and the circuit breakers name (a path may hold an API key). */
export const rpcOrigin = (chain: ChainConfig) => new URL(chain.rpc_url).origin;

export class CrossChainReader {
  private readonly clients = new Map<string, PublicClient>();
  private readonly cache = new Map<string, { readAt: Date; outcome: ChainOutcome }>();

  constructor(
    readonly config: PriceSourcesConfig,
    private readonly policy: SafeFetchPolicy,
    private readonly cacheMs: number,
  ) {}

  private client(chain: ChainConfig): PublicClient {
    let c = this.clients.get(chain.name);
    if (!c) {
      // No retries: a failing chain is reported at once (and counts once against its breaker).
      const transport = http(chain.rpc_url, { fetchFn: safeRpcFetch(this.policy, chain.timeout_ms), retryCount: 0, timeout: chain.timeout_ms });
      c = createPublicClient({ transport, cacheTime: 0 });
      this.clients.set(chain.name, c);
    }
    return c;
  }

  /** Every configured chain with sources for `pair` (canonical key), or those named. */
  chainsFor(pair: string, only?: readonly string[]): ChainConfig[] {
    const sources = this.config.pairs[pair] ?? [];
    return this.config.chains.filter((c) => sources.some((s) => s.chain === c.name) && (!only || only.includes(c.name)));
  }

  async read(pair: string, only?: readonly string[]): Promise<ChainRead[]> {
    const sources = this.config.pairs[pair] ?? [];
    return Promise.all(this.chainsFor(pair, only).map((chain) => this.readChain(pair, chain, sources.filter((s) => s.chain === chain.name))));
  }

  private async readChain(pair: string, chain: ChainConfig, sources: PriceSource[]): Promise<ChainRead> {
    const key = `${chain.name}|${pair}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.readAt.getTime() < this.cacheMs) return { chain, readAt: hit.readAt, cached: true, outcome: hit.outcome };
    const readAt = new Date();
    const outcome = await this.readFresh(chain, sources);
    if (outcome.ok && this.cacheMs > 0) this.cache.set(key, { readAt, outcome });
    return { chain, readAt, cached: false, outcome };
  }

  private async readFresh(chain: ChainConfig, sources: PriceSource[]): Promise<ChainOutcome> {
    const client = this.client(chain);
    let chainId: number;
    let blockNumber: bigint;
    try {
      [chainId, blockNumber] = await Promise.all([client.getChainId(), client.getBlockNumber({ cacheTime: 0 })]);
    } catch (err) {
      return { ok: false, status: "unreachable", error: readError(err) };
    }
    if (chainId !== chain.chain_id) return { ok: false, status: "wrong_chain", error: `the RPC answers for chain id ${chainId}, but ${chain.name} is configured as chain id ${chain.chain_id}` };
    const reads = await Promise.all(
      sources.map((source) =>
        readSource(client, source, blockNumber).then(
          (reading): SourceRead => ({ source, reading }),
          (err): SourceRead => ({ source, error: readError(err) }),
        ),
      ),
    );
    return { ok: true, blockNumber, sources: reads };
  }
}

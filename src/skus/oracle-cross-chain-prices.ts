import { z } from "zod";
import type { Breakers } from "../policy/circuit-breakers.js";
import { CrossChainReader, rpcOrigin } from "../onchain-prices/chain-reader.js";
import { crossChainReport } from "../onchain-prices/cross-chain-report.js";
import { PAIR, pairKey } from "../onchain-prices/price-sources.js";
import type { SkuHandler } from "./sku-handler.js";

// oracle.cross-chain-prices: one pair's price on every configured chain, read on-chain through viem
// (Chainlink-style aggregators, Uniswap v2 pair reserves, Uniswap v3 slot0), each read cited (chain,
// contract, method, block number, read time). The aggregate is the median of the chains' prices and
// the cheapest/dearest pair of chains is flagged with its deviation in basis points. Stale rounds and
// unreachable chains are reported and left out of the aggregate; a call where no chain gives a fresh
// price fails (nothing charged).

const Input = z
  .object({
    pair: z.string().trim().toUpperCase().regex(PAIR, "pair like ETH-USD").transform(pairKey),
    /** Only these configured chains (all chains with sources for the pair by default). */
    chains: z.array(z.string().trim().toLowerCase().min(1).max(32)).min(1).max(32).optional(),
    /** Overrides every Chainlink source's configured max age. */
    max_age_seconds: z.number().int().min(1).max(30 * 86_400).optional(),
    /** The highest-deviation pair exceeds the threshold above this many basis points. */
    deviation_threshold_bps: z.number().min(0).max(10_000).default(50),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Nullable = <T extends z.ZodType>(t: T) => t.nullable();
const Decimal = z.string().regex(/^\d+(\.\d+)?$/);
const Source = z.object({
  kind: z.enum(["chainlink", "uniswap-v2", "uniswap-v3"]),
  contract: z.string(),
  method: z.string(),
  block_number: z.string(),
  read_at: z.iso.datetime(),
  cached: z.boolean(),
  note: Nullable(z.string()),
  status: z.enum(["ok", "stale", "failed"]),
  price: Nullable(Decimal),
  stale_reason: Nullable(z.string()),
  error: Nullable(z.string()),
  round: Nullable(
    z.object({
      description: Nullable(z.string()),
      decimals: z.number().int(),
      round_id: z.string(),
      answer: z.string(),
      started_at: Nullable(z.iso.datetime()),
      updated_at: Nullable(z.iso.datetime()),
      answered_in_round: z.string(),
      age_seconds: Nullable(z.number().int()),
      max_age_seconds: Nullable(z.number().int()),
    }),
  ),
  pool: Nullable(
    z.object({
      token0: z.string(),
      token1: z.string(),
      decimals0: z.number().int(),
      decimals1: z.number().int(),
      base_token: z.string(),
      reserve0: Nullable(z.string()),
      reserve1: Nullable(z.string()),
      sqrt_price_x96: Nullable(z.string()),
      tick: Nullable(z.number().int()),
    }),
  ),
});
export const CrossChainPricesOutput = z.object({
  pair: z.string(),
  chains: z.array(
    z.object({
      chain: z.string(),
      chain_id: z.number().int(),
      rpc: z.string(),
      read_at: z.iso.datetime(),
      cached: z.boolean(),
      status: z.enum(["ok", "stale", "failed", "unreachable", "wrong_chain"]),
      price: Nullable(Decimal),
      block_number: Nullable(z.string()),
      error: Nullable(z.string()),
      sources: z.array(Source),
    }),
  ),
  aggregate: z.object({ method: z.string(), price: Decimal, chains: z.array(z.string()) }),
  highest_deviation: Nullable(
    z.object({
      low: z.object({ chain: z.string(), price: Decimal }),
      high: z.object({ chain: z.string(), price: Decimal }),
      deviation_bps: Decimal,
      threshold_bps: z.number(),
      exceeds_threshold: z.boolean(),
    }),
  ),
  price_decimals: z.number().int(),
  computed_at: z.iso.datetime(),
});

export function oracleCrossChainPrices(reader: CrossChainReader, breakers?: Breakers): SkuHandler<Input> {
  const input = Input.superRefine((v, ctx) => {
    const configured = reader.chainsFor(v.pair).map((c) => c.name);
    if (!configured.length) {
      const pairs = Object.keys(reader.config.pairs);
      return ctx.addIssue({ code: "custom", path: ["pair"], message: `no on-chain sources are configured for ${v.pair}; configured pairs: ${pairs.join(", ") || "none"}` });
    }
    for (const [i, name] of (v.chains ?? []).entries()) {
      if (!configured.includes(name)) ctx.addIssue({ code: "custom", path: ["chains", i], message: `${name} has no sources for ${v.pair}; chains for it: ${configured.join(", ")}` });
    }
  });
  return {
    skuId: "oracle.cross-chain-prices",
    poweredBy: "svc-onchain/viem",
    input,
    output: CrossChainPricesOutput,
    async upstreams(v) {
      // A chain whose breaker is open is reported as unreachable rather than refusing the call, unless
      // every chain's breaker is open (then the call is refused before any charge).
      const origins = [...new Set(reader.chainsFor(v.pair, v.chains).map(rpcOrigin))];
      const states = await Promise.all(origins.map((o) => breakers?.state(o)));
      const live = origins.filter((_, i) => states[i] !== "open");
      return live.length ? live : origins;
    },
    async run(v, ctx) {
      const reads = await reader.read(v.pair, v.chains);
      const report = crossChainReport(reads, { pair: v.pair, now: ctx.now, maxAgeSeconds: v.max_age_seconds, thresholdBps: v.deviation_threshold_bps });
      if (!report.aggregate) {
        const why = report.chains.map((c) => `${c.chain}: ${c.status}${c.error ? ` (${c.error})` : ""}`).join("; ");
        throw new Error(`no chain gave a fresh price for ${v.pair}: ${why}`);
      }
      return report;
    },
  };
}

import type { JsonObject } from "@bufbuild/protobuf";
import type { ChainRead, SourceRead } from "./chain-reader.js";
import { rpcOrigin } from "./chain-reader.js";
import { compare, div, median, mul, PRICE_DECIMALS, ratio, sub, toDecimalString, type Ratio } from "./exact-decimal.js";
import { PRICE_METHOD } from "./source-readers.js";

// Turns the raw chain reads into the deliverable of oracle.cross-chain-prices:
// - a Chainlink round is stale when updatedAt is older than the source's max age (or the caller's),
//   when updatedAt is 0 (round not complete) or when answeredInRound < roundId (a carried-over answer);
// - a chain's price is the median of its fresh sources; the aggregate is the median of the chains' prices;
// - the highest-deviation pair of chains is the cheapest and the dearest chain, its deviation in basis
//   points of the lower price: (high - low) / low * 10,000, rendered with 2 decimals.
// Stale and failed reads are shown, flagged, and left out of every median.

export interface ReportOptions {
  pair: string;
  now: Date;
  /** Overrides every Chainlink source's configured max age. */
  maxAgeSeconds?: number;
  thresholdBps: number;
}

type SourceStatus = "ok" | "stale" | "failed";

function staleReason(read: SourceRead, now: Date, maxAgeOverride: number | undefined): { reason: string | null; age: number | null } {
  if (read.reading?.kind !== "chainlink" || read.source.kind !== "chainlink") return { reason: null, age: null };
  const r = read.reading.round;
  if (r.updatedAt === 0n) return { reason: "updatedAt is 0: the round is not complete", age: null };
  const age = Math.max(0, Math.floor(now.getTime() / 1000) - Number(r.updatedAt));
  const maxAge = maxAgeOverride ?? read.source.max_age_seconds;
  if (age > maxAge) return { reason: `updatedAt is ${age} s old, more than the ${maxAge} s allowed`, age };
  if (r.answeredInRound < r.roundId) return { reason: `answeredInRound ${r.answeredInRound} < roundId ${r.roundId}: the answer was carried over from an earlier round`, age };
  return { reason: null, age };
}

const iso = (seconds: bigint) => (seconds > 0n && seconds < 8_640_000_000_000n ? new Date(Number(seconds) * 1000).toISOString() : null);

function sourceJson(chainRead: ChainRead, blockNumber: bigint, read: SourceRead, opts: ReportOptions): { json: JsonObject; status: SourceStatus; price: Ratio | null } {
  const { source, reading } = read;
  const base = {
    kind: source.kind,
    contract: source.address,
    method: PRICE_METHOD[source.kind],
    block_number: blockNumber.toString(),
    read_at: chainRead.readAt.toISOString(),
    cached: chainRead.cached,
    note: source.note ?? null,
  };
  if (!reading) return { json: { ...base, status: "failed", price: null, stale_reason: null, error: read.error ?? "unknown error", round: null, pool: null }, status: "failed", price: null };
  const { reason, age } = staleReason(read, opts.now, opts.maxAgeSeconds);
  const status: SourceStatus = reason ? "stale" : "ok";
  const round =
    reading.kind === "chainlink"
      ? {
          description: reading.round.description,
          decimals: reading.round.decimals,
          round_id: reading.round.roundId.toString(),
          answer: reading.round.answer.toString(),
          started_at: iso(reading.round.startedAt),
          updated_at: iso(reading.round.updatedAt),
          answered_in_round: reading.round.answeredInRound.toString(),
          age_seconds: age,
          max_age_seconds: opts.maxAgeSeconds ?? (source.kind === "chainlink" ? source.max_age_seconds : null),
        }
      : null;
  const pool =
    reading.kind !== "chainlink"
      ? {
          token0: reading.pool.token0,
          token1: reading.pool.token1,
          decimals0: reading.pool.decimals0,
          decimals1: reading.pool.decimals1,
          base_token: reading.pool.baseToken,
          reserve0: reading.pool.reserve0?.toString() ?? null,
          reserve1: reading.pool.reserve1?.toString() ?? null,
          sqrt_price_x96: reading.pool.sqrtPriceX96?.toString() ?? null,
          tick: reading.pool.tick ?? null,
        }
      : null;
  return {
    json: { ...base, status, price: toDecimalString(reading.price), stale_reason: reason, error: null, round, pool },
    status,
    price: reading.price,
  };
}

export function crossChainReport(reads: readonly ChainRead[], opts: ReportOptions) {
  const priced: { chain: string; price: Ratio }[] = [];
  const chains = reads.map((cr) => {
    const head = { chain: cr.chain.name, chain_id: cr.chain.chain_id, rpc: rpcOrigin(cr.chain), read_at: cr.readAt.toISOString(), cached: cr.cached };
    if (!cr.outcome.ok) return { ...head, status: cr.outcome.status, price: null, block_number: null, error: cr.outcome.error, sources: [] };
    const blockNumber = cr.outcome.blockNumber;
    const sources = cr.outcome.sources.map((s) => sourceJson(cr, blockNumber, s, opts));
    const fresh = sources.filter((s) => s.status === "ok").map((s) => s.price!);
    const status = fresh.length ? "ok" : sources.some((s) => s.status === "stale") ? "stale" : "failed";
    const price = fresh.length ? median(fresh) : null;
    if (price) priced.push({ chain: cr.chain.name, price });
    const error = status === "ok" ? null : status === "stale" ? "every source on this chain is stale" : "every source on this chain failed";
    return { ...head, status, price: price && toDecimalString(price), block_number: blockNumber.toString(), error, sources: sources.map((s) => s.json) };
  });

  const aggregate = priced.length ? { method: "median of the chains' prices", price: toDecimalString(median(priced.map((p) => p.price))), chains: priced.map((p) => p.chain) } : null;
  let highestDeviation = null;
  if (priced.length >= 2) {
    const sorted = [...priced].sort((a, b) => compare(a.price, b.price));
    const low = sorted[0]!;
    const high = sorted.at(-1)!;
    const bps = mul(div(sub(high.price, low.price), low.price), ratio(10_000n));
    highestDeviation = {
      low: { chain: low.chain, price: toDecimalString(low.price) },
      high: { chain: high.chain, price: toDecimalString(high.price) },
      deviation_bps: toDecimalString(bps, 2),
      threshold_bps: opts.thresholdBps,
      exceeds_threshold: compare(bps, ratio(BigInt(Math.round(opts.thresholdBps * 100)), 100n)) > 0,
    };
  }
  return {
    pair: opts.pair,
    chains,
    aggregate,
    highest_deviation: highestDeviation,
    price_decimals: PRICE_DECIMALS,
    computed_at: opts.now.toISOString(),
  };
}

import { BaseError, getAddress, parseAbi, type Address, type PublicClient } from "viem";
import { div, fromScaled, pow10, ratio, type Ratio } from "./exact-decimal.js";
import type { PriceSource } from "./price-sources.js";

// Reads one configured source at a pinned block and turns its integers into an exact price of the
// pair's base asset in its quote asset:
//   chainlink   decimals(), latestRoundData() -> answer / 10^decimals
//   uniswap-v2  token0(), token1(), getReserves(), decimals() of both tokens
//               -> (reserveQuote / 10^decQuote) / (reserveBase / 10^decBase)
//   uniswap-v3  token0(), token1(), slot0(), decimals() of both tokens
//               -> token1 per token0 = sqrtPriceX96^2 / 2^192 * 10^(dec0 - dec1), inverted when the base is token1

export const AGGREGATOR_V3_ABI = parseAbi([
  "function decimals() view returns (uint8)",
  "function description() view returns (string)",
  "function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)",
]);
export const ERC20_DECIMALS_ABI = parseAbi(["function decimals() view returns (uint8)"]);
export const UNISWAP_V2_PAIR_ABI = parseAbi([
  "function token0() view returns (address)",
  "function token1() view returns (address)",
  "function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)",
]);
export const UNISWAP_V3_POOL_ABI = parseAbi([
  "function token0() view returns (address)",
  "function token1() view returns (address)",
  "function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)",
]);

/** A contract answered, but not with a usable price (empty pool, non-positive answer, wrong token). */
export class SourceError extends Error {}

export interface ChainlinkRound {
  decimals: number;
  description: string | null;
  roundId: bigint;
  answer: bigint;
  startedAt: bigint;
  updatedAt: bigint;
  answeredInRound: bigint;
}

export interface PoolState {
  token0: Address;
  token1: Address;
  decimals0: number;
  decimals1: number;
  baseToken: Address;
  /** uniswap-v2 */
  reserve0?: bigint;
  reserve1?: bigint;
  blockTimestampLast?: number;
  /** uniswap-v3 */
  sqrtPriceX96?: bigint;
  tick?: number;
}

export type SourceReading = { kind: "chainlink"; price: Ratio; round: ChainlinkRound } | { kind: "uniswap-v2" | "uniswap-v3"; price: Ratio; pool: PoolState };

/** The contract method that yields the price, as cited in the deliverable. */
export const PRICE_METHOD: Record<PriceSource["kind"], string> = {
  chainlink: "latestRoundData()",
  "uniswap-v2": "getReserves()",
  "uniswap-v3": "slot0()",
};

const Q192 = 1n << 192n;

/** Uniswap v2 pair price of `base` in the other token, decimals applied. */
export function v2Price(pool: Required<Pick<PoolState, "token0" | "decimals0" | "decimals1" | "reserve0" | "reserve1" | "baseToken">>): Ratio {
  if (pool.reserve0 === 0n || pool.reserve1 === 0n) throw new SourceError("the pool has no liquidity (a reserve is zero)");
  const baseIs0 = pool.baseToken === pool.token0;
  const [rBase, rQuote, dBase, dQuote] = baseIs0 ? [pool.reserve0, pool.reserve1, pool.decimals0, pool.decimals1] : [pool.reserve1, pool.reserve0, pool.decimals1, pool.decimals0];
  return ratio(rQuote * pow10(dBase), rBase * pow10(dQuote));
}

/** Uniswap v3 pool price of `base` in the other token from sqrtPriceX96, decimals applied. */
export function v3Price(pool: Required<Pick<PoolState, "token0" | "decimals0" | "decimals1" | "sqrtPriceX96" | "baseToken">>): Ratio {
  if (pool.sqrtPriceX96 === 0n) throw new SourceError("the pool is not initialized (sqrtPriceX96 is zero)");
  const token1PerToken0 = ratio(pool.sqrtPriceX96 * pool.sqrtPriceX96 * pow10(pool.decimals0), Q192 * pow10(pool.decimals1));
  return pool.baseToken === pool.token0 ? token1PerToken0 : div(ratio(1n), token1PerToken0);
}

export function chainlinkPrice(round: ChainlinkRound): Ratio {
  if (round.answer <= 0n) throw new SourceError(`the aggregator's answer is ${round.answer}, not a positive price`);
  return fromScaled(round.answer, round.decimals);
}

async function readChainlink(client: PublicClient, address: Address, blockNumber: bigint): Promise<SourceReading> {
  const at = { address, abi: AGGREGATOR_V3_ABI, blockNumber } as const;
  const [decimals, data, description] = await Promise.all([
    client.readContract({ ...at, functionName: "decimals" }),
    client.readContract({ ...at, functionName: "latestRoundData" }),
    // Optional in the interface's spirit: a feed without description() still prices.
    client.readContract({ ...at, functionName: "description" }).catch(() => null),
  ]);
  const [roundId, answer, startedAt, updatedAt, answeredInRound] = data;
  const round = { decimals, description, roundId, answer, startedAt, updatedAt, answeredInRound };
  return { kind: "chainlink", price: chainlinkPrice(round), round };
}

async function readPool(client: PublicClient, source: Extract<PriceSource, { kind: "uniswap-v2" | "uniswap-v3" }>, blockNumber: bigint): Promise<SourceReading> {
  const abi = source.kind === "uniswap-v2" ? UNISWAP_V2_PAIR_ABI : UNISWAP_V3_POOL_ABI;
  const at = { address: source.address, abi, blockNumber } as const;
  const [token0, token1] = await Promise.all([client.readContract({ ...at, functionName: "token0" }), client.readContract({ ...at, functionName: "token1" })]);
  const baseToken = getAddress(source.base_token);
  if (baseToken !== getAddress(token0) && baseToken !== getAddress(token1)) {
    throw new SourceError(`base_token ${baseToken} is neither token0 (${token0}) nor token1 (${token1}) of the pool`);
  }
  const decimalsOf = (token: Address) => client.readContract({ address: token, abi: ERC20_DECIMALS_ABI, functionName: "decimals", blockNumber });
  const [decimals0, decimals1] = await Promise.all([decimalsOf(token0), decimalsOf(token1)]);
  const tokens = { token0: getAddress(token0), token1: getAddress(token1), decimals0, decimals1, baseToken };
  if (source.kind === "uniswap-v2") {
    const [reserve0, reserve1, blockTimestampLast] = await client.readContract({ address: source.address, abi: UNISWAP_V2_PAIR_ABI, functionName: "getReserves", blockNumber });
    const pool = { ...tokens, reserve0, reserve1, blockTimestampLast };
    return { kind: "uniswap-v2", price: v2Price(pool), pool };
  }
  const [sqrtPriceX96, tick] = await client.readContract({ address: source.address, abi: UNISWAP_V3_POOL_ABI, functionName: "slot0", blockNumber });
  const pool = { ...tokens, sqrtPriceX96, tick };
  return { kind: "uniswap-v3", price: v3Price(pool), pool };
}

export function readSource(client: PublicClient, source: PriceSource, blockNumber: bigint): Promise<SourceReading> {
  return source.kind === "chainlink" ? readChainlink(client, source.address, blockNumber) : readPool(client, source, blockNumber);
}

/** A one-line reason for a failed read (viem's short message and its cause's, when it has them). */
export function readError(err: unknown): string {
  if (err instanceof SourceError) return err.message;
  if (err instanceof BaseError) {
    const text = err.details && !err.shortMessage.includes(err.details) ? `${err.shortMessage} (${err.details})` : err.shortMessage;
    return text.length > 300 ? `${text.slice(0, 299)}…` : text;
  }
  return (err as Error)?.message ?? String(err);
}

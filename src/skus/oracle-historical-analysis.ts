import { z } from "zod";
import { analyzeHistory } from "../market-data/history-analysis.js";
import { REGIMES } from "../market-data/indicators.js";
import type { MarketReader, Read } from "../market-data/market-reader.js";
import { INTERVALS, type Interval } from "../market-data/market-types.js";
import type { CandleSeries, Venue } from "../market-data/venues.js";
import { pairFields, pairOf, requirePair, Source, sourceOf, usdtNote, VenueSchema, type Pair } from "./market-pair-input.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// oracle.historical-analysis: trend and pattern analysis of one pair's closed candles on one venue:
// SMA 20/50, EMA 20/50, RSI 14, maximum drawdown, realized volatility, trend regime (documented rule),
// the last SMA20/SMA50 crossover and the recent 20-candle high/low as resistance/support
// (market-data/history-analysis.ts). `interval` is one of 1m, 5m, 15m, 1h, 1d (default 1d); `lookback`
// is 20 to 250 candles (default 120; a venue with less history gives fewer, at least 20). A venue
// failing fails the call (503, nothing charged); fewer than 20 closed candles is refused (409
// `insufficient_history`, nothing charged).

export const MIN_CANDLES = 20;
export const MAX_LOOKBACK = 250;

const Input = requirePair(
  z
    .object({
      ...pairFields,
      venue: VenueSchema.default("coinbase"),
      interval: z.enum(INTERVALS).default("1d"),
      lookback: z.number().int().min(MIN_CANDLES).max(MAX_LOOKBACK).default(120).describe("closed candles analyzed, newest last"),
    })
    .loose(),
);
type Input = z.infer<typeof Input>;

const Num = z.number().nullable();

export const HistorySection = z.object({
  venue: VenueSchema,
  venue_symbol: z.string(),
  interval: z.enum(INTERVALS),
  lookback_requested: z.number().int(),
  candles_used: z.number().int(),
  from: z.string(),
  to: z.string(),
  first_close: z.string(),
  last_close: z.string(),
  change_pct: Num,
  moving_averages: z.object({ sma_20: Num, sma_50: Num, ema_20: Num, ema_50: Num, close_vs_sma_20_pct: Num, close_vs_sma_50_pct: Num }),
  rsi_14: Num,
  rsi_state: z.enum(["overbought", "oversold", "neutral"]).nullable(),
  max_drawdown: z.object({ pct: z.number(), peak_time: z.string().nullable(), peak_close: Num, trough_time: z.string().nullable(), trough_close: Num }),
  realized_volatility_annualized_pct: Num,
  regime: z.object({ label: z.enum(REGIMES), sma_50_slope_pct: Num, rule: z.string() }),
  last_sma_crossover: z.object({ direction: z.enum(["bullish", "bearish"]), time: z.string(), rule: z.string() }).nullable(),
  recent_range: z.object({ candles: z.number().int(), resistance: z.string(), resistance_time: z.string(), support: z.string(), support_time: z.string(), position_pct: Num }).nullable(),
  source: Source,
});
export type HistorySection = z.infer<typeof HistorySection>;

const Output = HistorySection.extend({ pair: z.string(), quote_note: z.string().nullable(), answered_at: z.string() });

/** Reads the candles and analyzes them; refuses a series shorter than MIN_CANDLES. */
export async function historySection(reader: MarketReader, pair: Pair, venue: Venue, interval: Interval, lookback: number): Promise<HistorySection> {
  return historyFrom(pair, venue, await reader.candles(venue, pair.base, pair.quote, interval, lookback), lookback);
}

/** The analysis of one candle read (refuses fewer than MIN_CANDLES candles). */
export function historyFrom(pair: Pair, venue: Venue, read: Read<CandleSeries>, lookback: number): HistorySection {
  const interval = read.value.interval;
  const candles = read.value.candles.slice(-lookback);
  if (candles.length < MIN_CANDLES) throw new SkuRefusal("insufficient_history", `${venue} has ${candles.length} closed ${interval} candles of ${pair.id}; the analysis needs at least ${MIN_CANDLES}`);
  return { venue, venue_symbol: read.value.venueSymbol, lookback_requested: lookback, ...analyzeHistory(candles, interval), source: sourceOf(venue, read) };
}

export function oracleHistoricalAnalysis(reader: MarketReader): SkuHandler<Input> {
  return {
    skuId: "oracle.historical-analysis",
    poweredBy: "svc-market-data/indicators",
    input: Input,
    output: Output,
    upstreams: (input) => [reader.venues.baseUrl(input.venue)],
    async run(input, ctx) {
      const pair = pairOf(input)!;
      const section = await historySection(reader, pair, input.venue, input.interval, input.lookback);
      return { pair: pair.id, ...section, quote_note: usdtNote([input.venue], pair.quote), answered_at: ctx.now.toISOString() };
    },
  };
}

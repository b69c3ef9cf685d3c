import { z } from "zod";
import type { MarketReader, Read } from "../market-data/market-reader.js";
import { INTERVAL_SECONDS } from "../market-data/market-types.js";
import { candlesNeeded, DEFAULT_THRESHOLDS, highestLevel, LEVELS, VOLATILITY_WINDOWS, windowVolatility, type Thresholds } from "../market-data/volatility.js";
import type { CandleSeries, Venue } from "../market-data/venues.js";
import { pairFields, pairOf, requirePair, Source, sourceOf, usdtNote, VenueSchema, type Pair } from "./market-pair-input.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// oracle.volatility-monitor: realized volatility of a pair on one venue over 24 h and 7 d (hourly
// candles) and 30 d (daily candles), annualized, each with a level from thresholds (the buyer's or the
// defaults 30 / 60 / 100 % a year); market-data/volatility.ts documents the windows and the level rule.
// The headline level is the highest window's; `alert` is set when it is elevated or extreme. A venue
// failing fails the call (503, nothing charged); a pair without enough history is refused (409
// `insufficient_history`, nothing charged).

const Pct = z.number().positive().max(10_000);

const ThresholdsInput = z
  .object({ low_below_pct: Pct.optional(), elevated_from_pct: Pct.optional(), extreme_from_pct: Pct.optional() })
  .strict()
  .refine((t) => {
    const m = { ...DEFAULT_THRESHOLDS, ...t };
    return m.low_below_pct < m.elevated_from_pct && m.elevated_from_pct < m.extreme_from_pct;
  }, "thresholds must rise: low_below_pct < elevated_from_pct < extreme_from_pct (defaults 30 / 60 / 100)");

const Input = requirePair(
  z
    .object({
      ...pairFields,
      venue: VenueSchema.default("coinbase"),
      thresholds: ThresholdsInput.describe("annualized % cutoffs; defaults 30 / 60 / 100").optional(),
    })
    .loose(),
);
type Input = z.infer<typeof Input>;

export const LEVEL_RULE = "low below low_below_pct; normal from low_below_pct; elevated from elevated_from_pct; extreme from extreme_from_pct (annualized %)";
export const VOLATILITY_METHOD = "sample standard deviation of closed-candle log returns ln(close_t / close_t-1), annualized by sqrt(candles per 365-day year): sqrt(8760) hourly, sqrt(365) daily";

export const WindowSchema = z.object({
  window: z.enum(["24h", "7d", "30d"]),
  interval: z.enum(["1h", "1d"]),
  returns_expected: z.number().int(),
  returns_used: z.number().int(),
  coverage: z.number(),
  from: z.string().nullable(),
  to: z.string().nullable(),
  period_stdev: z.number().nullable(),
  annualized_pct: z.number().nullable(),
  level: z.enum(LEVELS).nullable(),
  source: Source,
});

export const VolatilitySection = z.object({
  venue: VenueSchema,
  venue_symbol: z.string(),
  windows: z.array(WindowSchema),
  level: z.enum(LEVELS),
  alert: z.boolean(),
  alerts: z.array(z.string()),
  thresholds: z.object({ low_below_pct: z.number(), elevated_from_pct: z.number(), extreme_from_pct: z.number(), set_by: z.enum(["buyer", "default"]) }),
  level_rule: z.string(),
  method: z.string(),
});
export type VolatilitySection = z.infer<typeof VolatilitySection>;

const Output = VolatilitySection.extend({ pair: z.string(), quote_note: z.string().nullable(), answered_at: z.string() });

/** Candles of an interval the windows need. */
export const candlesFor = (interval: "1h" | "1d") => Math.max(...VOLATILITY_WINDOWS.filter((w) => w.interval === interval).map(candlesNeeded));

/** Reads hourly and daily candles of one venue and computes every window. */
export async function volatilitySection(reader: MarketReader, pair: Pair, venue: Venue, buyer?: Partial<Thresholds>): Promise<VolatilitySection> {
  const [hourly, daily] = await Promise.all([reader.candles(venue, pair.base, pair.quote, "1h", candlesFor("1h")), reader.candles(venue, pair.base, pair.quote, "1d", candlesFor("1d"))]);
  return volatilityFrom(pair, venue, hourly, daily, buyer);
}

/** Every window from an hourly and a daily read of one venue (the newest candles of each are used). */
export function volatilityFrom(pair: Pair, venue: Venue, hourly: Read<CandleSeries>, daily: Read<CandleSeries>, buyer?: Partial<Thresholds>): VolatilitySection {
  const t: Thresholds = { ...DEFAULT_THRESHOLDS, ...buyer };
  const windows = VOLATILITY_WINDOWS.map((w) => {
    const read = w.interval === "1h" ? hourly : daily;
    return { ...windowVolatility(w, read.value.candles, t, INTERVAL_SECONDS[w.interval]), source: sourceOf(venue, read) };
  });
  const level = highestLevel(windows.map((w) => w.level));
  if (!level) throw new SkuRefusal("insufficient_history", `${venue} has too few closed candles of ${pair.id} for any volatility window (each needs at least 3)`);
  const alerts = windows
    .filter((w) => w.level === "elevated" || w.level === "extreme")
    .map((w) => `${w.window} realized volatility ${w.annualized_pct}% a year is ${w.level} (${w.level === "extreme" ? `>= ${t.extreme_from_pct}` : `>= ${t.elevated_from_pct}`}%)`);
  return {
    venue,
    venue_symbol: hourly.value.venueSymbol,
    windows,
    level,
    alert: alerts.length > 0,
    alerts,
    thresholds: { ...t, set_by: buyer && Object.keys(buyer).length ? "buyer" : "default" },
    level_rule: LEVEL_RULE,
    method: VOLATILITY_METHOD,
  };
}

export function oracleVolatilityMonitor(reader: MarketReader): SkuHandler<Input> {
  return {
    skuId: "oracle.volatility-monitor",
    poweredBy: "svc-market-data/volatility",
    input: Input,
    output: Output,
    upstreams: (input) => [reader.venues.baseUrl(input.venue)],
    async run(input, ctx) {
      const pair = pairOf(input)!;
      const section = await volatilitySection(reader, pair, input.venue, input.thresholds);
      return { pair: pair.id, ...section, quote_note: usdtNote([input.venue], pair.quote), answered_at: ctx.now.toISOString() };
    },
  };
}

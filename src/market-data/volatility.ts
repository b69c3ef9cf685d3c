import { realizedVolatility } from "./indicators.js";
import type { Candle, Interval } from "./market-types.js";

// Realized volatility over fixed windows and the level rule of oracle.volatility-monitor.
//
// Windows (closed candles; n returns need n + 1 closes):
//   24h  the last 24 hourly log returns
//   7d   the last 168 hourly log returns
//   30d  the last 30 daily log returns
// Each is annualized (see indicators.ts: sample stdev of log returns * sqrt(periods per year), 365-day
// year). A window with fewer candles than it needs is computed over what the venue has (coverage < 1)
// when it still has 2 returns, and reported as unavailable otherwise.
//
// Level of an annualized volatility v (percent), with thresholds low < elevated < extreme:
//   low       v <  low_below_pct
//   normal    low_below_pct <= v < elevated_from_pct
//   elevated  elevated_from_pct <= v < extreme_from_pct
//   extreme   v >= extreme_from_pct
// The defaults (30 / 60 / 100 % a year) bracket what large crypto assets usually show: BTC's 30-day
// realized volatility mostly sits between 30 % and 80 %. The headline level is the highest window's.

export const VOLATILITY_WINDOWS = [
  { window: "24h", interval: "1h", returns: 24 },
  { window: "7d", interval: "1h", returns: 168 },
  { window: "30d", interval: "1d", returns: 30 },
] as const satisfies readonly { window: string; interval: Interval; returns: number }[];
export type VolatilityWindow = (typeof VOLATILITY_WINDOWS)[number]["window"];

export const LEVELS = ["low", "normal", "elevated", "extreme"] as const;
export type VolatilityLevel = (typeof LEVELS)[number];

export interface Thresholds {
  low_below_pct: number;
  elevated_from_pct: number;
  extreme_from_pct: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { low_below_pct: 30, elevated_from_pct: 60, extreme_from_pct: 100 };

export function levelOf(annualizedPct: number, t: Thresholds): VolatilityLevel {
  if (annualizedPct < t.low_below_pct) return "low";
  if (annualizedPct < t.elevated_from_pct) return "normal";
  if (annualizedPct < t.extreme_from_pct) return "elevated";
  return "extreme";
}

/** The highest of some levels (null when there is none). */
export function highestLevel(levels: readonly (VolatilityLevel | null)[]): VolatilityLevel | null {
  let best = -1;
  for (const l of levels) if (l) best = Math.max(best, LEVELS.indexOf(l));
  return best < 0 ? null : LEVELS[best]!;
}

export interface WindowVolatility {
  window: VolatilityWindow;
  interval: (typeof VOLATILITY_WINDOWS)[number]["interval"];
  returns_expected: number;
  returns_used: number;
  /** returns_used / returns_expected. */
  coverage: number;
  /** Open time of the first candle and close time of the last one (ISO 8601); null when unavailable. */
  from: string | null;
  to: string | null;
  /** Standard deviation of one candle's log return; null when unavailable. */
  period_stdev: number | null;
  annualized_pct: number | null;
  level: VolatilityLevel | null;
}

const round = (n: number, dp: number) => Math.round(n * 10 ** dp) / 10 ** dp;

/** The candles a window needs (returns + 1). */
export function candlesNeeded(window: (typeof VOLATILITY_WINDOWS)[number]): number {
  return window.returns + 1;
}

/** A window's volatility over the newest candles of a series of its interval (oldest first). */
export function windowVolatility(w: (typeof VOLATILITY_WINDOWS)[number], candles: readonly Candle[], t: Thresholds, stepSeconds: number): WindowVolatility {
  const used = candles.slice(-candlesNeeded(w));
  const rv = realizedVolatility(used, w.interval);
  const pct = rv ? round(rv.annualized * 100, 4) : null;
  return {
    window: w.window,
    interval: w.interval,
    returns_expected: w.returns,
    returns_used: rv?.returns ?? 0,
    coverage: round((rv?.returns ?? 0) / w.returns, 4),
    from: rv ? new Date(used[0]!.time * 1000).toISOString() : null,
    to: rv ? new Date((used.at(-1)!.time + stepSeconds) * 1000).toISOString() : null,
    period_stdev: rv ? round(rv.periodStdev, 10) : null,
    annualized_pct: pct,
    level: pct === null ? null : levelOf(pct, t),
  };
}

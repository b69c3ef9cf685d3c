import { EMA, RSI, SMA } from "trading-signals";
import { INTERVAL_SECONDS, type Candle, type Interval } from "./market-types.js";

// Indicators over candle arrays (oldest first, closed candles, as VenueClient.candles returns them).
// All of them read the closes unless said otherwise; the venues' decimal strings become numbers here,
// because these are statistics, not prices anyone settles at.
//
// - SMA(n): mean of the last n closes (trading-signals SMA).
// - EMA(n): trading-signals EMA, weight 2/(n+1), seeded with the first close; reported once n closes
//   have been seen (the library's stability rule).
// - RSI(n): Wilder's RSI (trading-signals RSI: average gain/loss seeded by a simple mean of the first n
//   changes, then Wilder-smoothed); needs n+1 closes. 100 when there was no loss.
// - Realized volatility: sample standard deviation (n-1) of the log returns ln(close_t / close_t-1),
//   annualized by sqrt(periods per year) with crypto's continuous calendar: 365 days a year, so hourly
//   returns scale by sqrt(8760) and daily by sqrt(365).
// - Max drawdown: the largest fall from a running peak close to a later close, as a fraction of the peak.
// - Trend regime (REGIME_RULE below): closes against SMA(short) and SMA(long) and the slope of SMA(long).

export const DAYS_PER_YEAR = 365;

export interface CandlePoint {
  /** Open time of the candle (unix seconds). */
  time: number;
  price: number;
}

export function closesOf(candles: readonly Candle[]): number[] {
  return candles.map((c) => Number(c.close));
}

/** Each candle's SMA(period) of the closes, null until `period` closes were seen. */
export function smaSeries(candles: readonly Candle[], period: number): (number | null)[] {
  const sma = new SMA(period);
  return closesOf(candles).map((p) => sma.add(p));
}

/** SMA(period) of the latest closes; null with fewer than `period` candles. */
export function sma(candles: readonly Candle[], period: number): number | null {
  return candles.length < period ? null : (smaSeries(candles, period).at(-1) ?? null);
}

/** EMA(period) at the latest close; null with fewer than `period` candles. */
export function ema(candles: readonly Candle[], period: number): number | null {
  const e = new EMA(period);
  for (const p of closesOf(candles)) e.add(p);
  return e.isStable ? e.getResultOrThrow() : null;
}

/** Wilder's RSI(period) at the latest close; null with fewer than period + 1 candles. */
export function rsi(candles: readonly Candle[], period = 14): number | null {
  const r = new RSI(period);
  let last: number | null = null;
  for (const p of closesOf(candles)) last = r.add(p);
  return candles.length > period ? last : null;
}

export type RsiState = "overbought" | "oversold" | "neutral";

/** The usual reading of an RSI: at or above 70 overbought, at or below 30 oversold. */
export function rsiState(value: number): RsiState {
  return value >= 70 ? "overbought" : value <= 30 ? "oversold" : "neutral";
}

/** ln(close_t / close_t-1) for each consecutive pair of candles. */
export function logReturns(candles: readonly Candle[]): number[] {
  const closes = closesOf(candles);
  const out: number[] = [];
  for (let i = 1; i < closes.length; i++) out.push(Math.log(closes[i]! / closes[i - 1]!));
  return out;
}

/** How many candles of an interval a (365-day, around-the-clock) year holds. */
export function periodsPerYear(interval: Interval): number {
  return (DAYS_PER_YEAR * 86_400) / INTERVAL_SECONDS[interval];
}

export interface RealizedVolatility {
  /** Log returns used (candles - 1). */
  returns: number;
  /** Sample standard deviation of the per-candle log returns. */
  periodStdev: number;
  /** periodStdev * sqrt(periods per year), as a fraction (0.5 = 50 %). */
  annualized: number;
  periodsPerYear: number;
}

/** Realized volatility of the candles' closes; null with fewer than 3 candles (2 returns). */
export function realizedVolatility(candles: readonly Candle[], interval: Interval): RealizedVolatility | null {
  const r = logReturns(candles);
  if (r.length < 2) return null;
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1);
  const periodStdev = Math.sqrt(variance);
  const ppy = periodsPerYear(interval);
  return { returns: r.length, periodStdev, annualized: periodStdev * Math.sqrt(ppy), periodsPerYear: ppy };
}

export interface Drawdown {
  /** Largest peak-to-later-trough fall of the closes as a fraction of the peak (0 when closes never fell). */
  fraction: number;
  peak: CandlePoint | null;
  trough: CandlePoint | null;
}

export function maxDrawdown(candles: readonly Candle[]): Drawdown {
  const closes = closesOf(candles);
  let peak = 0;
  let best: Drawdown = { fraction: 0, peak: null, trough: null };
  for (let i = 0; i < closes.length; i++) {
    if (closes[i]! > closes[peak]!) peak = i;
    const fall = (closes[peak]! - closes[i]!) / closes[peak]!;
    if (fall > best.fraction) best = { fraction: fall, peak: { time: candles[peak]!.time, price: closes[peak]! }, trough: { time: candles[i]!.time, price: closes[i]! } };
  }
  return best;
}

export const REGIMES = ["uptrend", "downtrend", "sideways", "undetermined"] as const;
export type Regime = (typeof REGIMES)[number];

export interface RegimeOptions {
  short: number;
  long: number;
  /** Candles back over which the slope of SMA(long) is measured. */
  slopeBars: number;
}

export const DEFAULT_REGIME: RegimeOptions = { short: 20, long: 50, slopeBars: 10 };

export function regimeRule(o: RegimeOptions = DEFAULT_REGIME): string {
  return (
    `uptrend when close > SMA${o.short} > SMA${o.long} and SMA${o.long} rose over the last ${o.slopeBars} candles; ` +
    `downtrend when close < SMA${o.short} < SMA${o.long} and SMA${o.long} fell over the last ${o.slopeBars} candles; ` +
    `sideways otherwise; undetermined with fewer than ${o.long + o.slopeBars} candles`
  );
}

export interface TrendRegime {
  regime: Regime;
  close: number | null;
  smaShort: number | null;
  smaLong: number | null;
  /** SMA(long) now relative to slopeBars candles ago, as a fraction. */
  smaLongSlope: number | null;
  rule: string;
}

/** The trend regime of the closes by REGIME rule (see regimeRule). */
export function trendRegime(candles: readonly Candle[], o: RegimeOptions = DEFAULT_REGIME): TrendRegime {
  const rule = regimeRule(o);
  const close = candles.length ? Number(candles.at(-1)!.close) : null;
  if (candles.length < o.long + o.slopeBars) return { regime: "undetermined", close, smaShort: sma(candles, o.short), smaLong: sma(candles, o.long), smaLongSlope: null, rule };
  const longSeries = smaSeries(candles, o.long);
  const smaShort = sma(candles, o.short)!;
  const smaLong = longSeries.at(-1)!;
  const before = longSeries.at(-1 - o.slopeBars)!;
  const slope = smaLong / before - 1;
  let regime: Regime = "sideways";
  if (close! > smaShort && smaShort > smaLong && slope > 0) regime = "uptrend";
  else if (close! < smaShort && smaShort < smaLong && slope < 0) regime = "downtrend";
  return { regime, close, smaShort, smaLong, smaLongSlope: slope, rule };
}

export interface Crossover {
  direction: "bullish" | "bearish";
  /** Open time of the candle on which SMA(short) crossed SMA(long). */
  time: number;
}

/** The most recent crossing of SMA(short) over (bullish) or under (bearish) SMA(long), if any. */
export function lastCrossover(candles: readonly Candle[], short: number, long: number): Crossover | null {
  const s = smaSeries(candles, short);
  const l = smaSeries(candles, long);
  let prev = 0;
  let last: Crossover | null = null;
  for (let i = 0; i < candles.length; i++) {
    if (s[i] == null || l[i] == null) continue;
    const sign = Math.sign(s[i]! - l[i]!);
    if (sign !== 0 && prev !== 0 && sign !== prev) last = { direction: sign > 0 ? "bullish" : "bearish", time: candles[i]!.time };
    if (sign !== 0) prev = sign;
  }
  return last;
}

export interface RecentRange {
  /** Highest high of the last `candles` candles, the venue's decimal string. */
  high: { price: string; time: number };
  /** Lowest low of the last `candles` candles. */
  low: { price: string; time: number };
  candles: number;
}

/** Highest high and lowest low of the last n candles (a resistance and a support level); null without candles. */
export function recentRange(candles: readonly Candle[], n: number): RecentRange | null {
  const window = candles.slice(-n);
  if (!window.length) return null;
  let hi = window[0]!;
  let lo = window[0]!;
  for (const c of window) {
    if (Number(c.high) > Number(hi.high)) hi = c;
    if (Number(c.low) < Number(lo.low)) lo = c;
  }
  return { high: { price: hi.high, time: hi.time }, low: { price: lo.low, time: lo.time }, candles: window.length };
}

/** Change of the close from the first to the last candle, as a fraction; null with fewer than 2 candles. */
export function changeOver(candles: readonly Candle[]): number | null {
  if (candles.length < 2) return null;
  return Number(candles.at(-1)!.close) / Number(candles[0]!.close) - 1;
}

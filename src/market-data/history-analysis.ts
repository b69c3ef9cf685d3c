import { changeOver, DEFAULT_REGIME, ema, lastCrossover, maxDrawdown, realizedVolatility, recentRange, rsi, rsiState, sma, trendRegime, type Regime, type RsiState } from "./indicators.js";
import { INTERVAL_SECONDS, type Candle, type Interval } from "./market-types.js";

// Trend and pattern analysis of one candle series (closed candles, oldest first), as
// oracle.historical-analysis and oracle.comprehensive-report report it. Indicators are those of
// indicators.ts; figures are numbers rounded to 10 significant digits (percentages to 4 decimals), the
// recent high/low keep the venue's decimal strings. An indicator that needs more candles than the
// series has is null.

export const RANGE_CANDLES = 20;

export interface HistoryAnalysis {
  interval: Interval;
  candles_used: number;
  from: string;
  to: string;
  first_close: string;
  last_close: string;
  change_pct: number | null;
  moving_averages: { sma_20: number | null; sma_50: number | null; ema_20: number | null; ema_50: number | null; close_vs_sma_20_pct: number | null; close_vs_sma_50_pct: number | null };
  rsi_14: number | null;
  rsi_state: RsiState | null;
  max_drawdown: { pct: number; peak_time: string | null; peak_close: number | null; trough_time: string | null; trough_close: number | null };
  realized_volatility_annualized_pct: number | null;
  regime: { label: Regime; sma_50_slope_pct: number | null; rule: string };
  last_sma_crossover: { direction: "bullish" | "bearish"; time: string; rule: string } | null;
  recent_range: { candles: number; resistance: string; resistance_time: string; support: string; support_time: string; position_pct: number | null } | null;
}

const sig = (n: number | null) => (n === null ? null : Number(n.toPrecision(10)));
const pct = (n: number | null) => (n === null ? null : Math.round(n * 100 * 10_000) / 10_000 || 0);
const iso = (t: number) => new Date(t * 1000).toISOString();

/** The analysis of a series with at least 2 candles. */
export function analyzeHistory(candles: readonly Candle[], interval: Interval): HistoryAnalysis {
  if (candles.length < 2) throw new Error("analyzeHistory needs at least 2 candles");
  const step = INTERVAL_SECONDS[interval];
  const close = Number(candles.at(-1)!.close);
  const sma20 = sma(candles, 20);
  const sma50 = sma(candles, 50);
  const r = rsi(candles, 14);
  const dd = maxDrawdown(candles);
  const regime = trendRegime(candles, DEFAULT_REGIME);
  const cross = lastCrossover(candles, 20, 50);
  const range = recentRange(candles, RANGE_CANDLES);
  const vol = realizedVolatility(candles, interval);
  const rangeWidth = range ? Number(range.high.price) - Number(range.low.price) : 0;
  return {
    interval,
    candles_used: candles.length,
    from: iso(candles[0]!.time),
    to: iso(candles.at(-1)!.time + step),
    first_close: candles[0]!.close,
    last_close: candles.at(-1)!.close,
    change_pct: pct(changeOver(candles)),
    moving_averages: {
      sma_20: sig(sma20),
      sma_50: sig(sma50),
      ema_20: sig(ema(candles, 20)),
      ema_50: sig(ema(candles, 50)),
      close_vs_sma_20_pct: sma20 === null ? null : pct(close / sma20 - 1),
      close_vs_sma_50_pct: sma50 === null ? null : pct(close / sma50 - 1),
    },
    rsi_14: r === null ? null : Math.round(r * 100) / 100,
    rsi_state: r === null ? null : rsiState(r),
    max_drawdown: {
      pct: pct(dd.fraction)!,
      peak_time: dd.peak ? iso(dd.peak.time) : null,
      peak_close: dd.peak?.price ?? null,
      trough_time: dd.trough ? iso(dd.trough.time) : null,
      trough_close: dd.trough?.price ?? null,
    },
    realized_volatility_annualized_pct: vol ? pct(vol.annualized) : null,
    regime: { label: regime.regime, sma_50_slope_pct: pct(regime.smaLongSlope), rule: regime.rule },
    last_sma_crossover: cross ? { direction: cross.direction, time: iso(cross.time), rule: "SMA20 crossing above (bullish) or below (bearish) SMA50" } : null,
    recent_range: range
      ? {
          candles: range.candles,
          resistance: range.high.price,
          resistance_time: iso(range.high.time),
          support: range.low.price,
          support_time: iso(range.low.time),
          // Where the last close sits between support (0 %) and resistance (100 %).
          position_pct: rangeWidth > 0 ? pct((close - Number(range.low.price)) / rangeWidth) : null,
        }
      : null,
  };
}

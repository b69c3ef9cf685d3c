import type { Regime, RsiState } from "../market-data/indicators.js";
import type { SentimentLabel } from "../sentiment/lexicon-sentiment.js";

// The numeric risk score (0-100, higher is riskier) of crypto.investment-plays, and the stance rules.
// The score is a sum of six capped components, each from a figure the deliverable also reports:
//   volatility  40 x min(1, annualized realized volatility % / 150)
//   drawdown    25 x min(1, maximum drawdown % over the lookback / 60)
//   trend       10 for a downtrend, 6 undetermined, 5 sideways, 0 uptrend
//   momentum    10 x min(1, |RSI14 - 50| / 50)   (an extreme RSI, either way, is riskier; 5 when unknown)
//   liquidity   10 x min(1, order-book spread in bps / 50)
//   sentiment    5 x (1 - news score) / 2        (news score in [-1, 1]; no story counts as 0 -> 2.5)
// Bands: low below 34, moderate below 67, high from 67. A buyer's risk tolerance accepts: low -> low
// band only; medium -> low and moderate; high -> every band.

export const RISK_MODEL = {
  formula:
    "risk = volatility + drawdown + trend + momentum + liquidity + sentiment, rounded to 0.1, at most 100. volatility = 40*min(1, annualized_vol_pct/150); drawdown = 25*min(1, max_drawdown_pct/60); trend = downtrend 10, undetermined 6, sideways 5, uptrend 0; momentum = 10*min(1, |RSI14-50|/50) (5 when RSI is unknown); liquidity = 10*min(1, spread_bps/50); sentiment = 5*(1-news_score)/2 (news_score in [-1,1], 0 with no story).",
  bands: "low < 34 <= moderate < 67 <= high",
  components_max: { volatility: 40, drawdown: 25, trend: 10, momentum: 10, liquidity: 10, sentiment: 5 },
} as const;

export const RISK_BANDS = ["low", "moderate", "high"] as const;
export type RiskBand = (typeof RISK_BANDS)[number];
export const TOLERANCES = ["low", "medium", "high"] as const;
export type Tolerance = (typeof TOLERANCES)[number];

export interface RiskInputs {
  volatilityPct: number | null;
  drawdownPct: number;
  regime: Regime;
  rsi: number | null;
  spreadBps: number;
  /** Mean normalized news score in [-1, 1]; null when no story. */
  newsScore: number | null;
}

export interface RiskScore {
  score: number;
  band: RiskBand;
  components: { volatility: number; drawdown: number; trend: number; momentum: number; liquidity: number; sentiment: number };
}

const r1 = (n: number) => Math.round(n * 10) / 10;
const cap = (n: number) => Math.max(0, Math.min(1, n));
const TREND: Record<Regime, number> = { downtrend: 10, undetermined: 6, sideways: 5, uptrend: 0 };

export function bandOf(score: number): RiskBand {
  return score < 34 ? "low" : score < 67 ? "moderate" : "high";
}

export function riskScore(i: RiskInputs): RiskScore {
  // A volatility that cannot be computed is treated as the cap: unknown is not safe.
  const components = {
    volatility: r1(40 * (i.volatilityPct === null ? 1 : cap(i.volatilityPct / 150))),
    drawdown: r1(25 * cap(i.drawdownPct / 60)),
    trend: TREND[i.regime],
    momentum: r1(i.rsi === null ? 5 : 10 * cap(Math.abs(i.rsi - 50) / 50)),
    liquidity: r1(10 * cap(i.spreadBps / 50)),
    sentiment: r1((5 * (1 - (i.newsScore ?? 0))) / 2),
  };
  const score = Math.min(100, r1(Object.values(components).reduce((a, b) => a + b, 0)));
  return { score, band: bandOf(score), components };
}

export function fits(band: RiskBand, tolerance: Tolerance): boolean {
  return tolerance === "high" || band === "low" || (tolerance === "medium" && band === "moderate");
}

export const STANCES = ["avoid", "wait_for_pullback", "watch_for_reversal", "accumulate", "reduce", "range_trade", "no_clear_play"] as const;
export type Stance = (typeof STANCES)[number];

export const STANCE_RULES =
  "first that applies: avoid (downtrend and negative news); wait_for_pullback (RSI14 >= 70); watch_for_reversal (RSI14 <= 30); accumulate (uptrend); reduce (downtrend); range_trade (sideways: buy near support, trim near resistance); no_clear_play (regime undetermined)";

export function stanceOf(regime: Regime, rsiState: RsiState | null, news: SentimentLabel | null): Stance {
  if (regime === "downtrend" && news === "negative") return "avoid";
  if (rsiState === "overbought") return "wait_for_pullback";
  if (rsiState === "oversold") return "watch_for_reversal";
  if (regime === "uptrend") return "accumulate";
  if (regime === "downtrend") return "reduce";
  if (regime === "sideways") return "range_trade";
  return "no_clear_play";
}

import { expect } from "chai";
import type { Candle } from "../../../src/market-data/market-types.js";
import { ema, lastCrossover, logReturns, maxDrawdown, periodsPerYear, realizedVolatility, recentRange, regimeRule, rsi, rsiState, sma, trendRegime } from "../../../src/market-data/indicators.js";
import { analyzeHistory } from "../../../src/market-data/history-analysis.js";
import { DEFAULT_THRESHOLDS, highestLevel, levelOf, VOLATILITY_WINDOWS, windowVolatility } from "../../../src/market-data/volatility.js";

// Indicator math against hand computations and independent re-implementations.

const DAY = 86_400;
const T0 = 1_780_000_000 - (1_780_000_000 % DAY);

function candles(closes: readonly number[], step = DAY): Candle[] {
  return closes.map((c, i) => ({ time: T0 + i * step, open: String(closes[i - 1] ?? c), high: String(Math.max(c, closes[i - 1] ?? c) + 1), low: String(Math.min(c, closes[i - 1] ?? c) - 1), close: String(c), volume: "1" }));
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("market-data indicators", () => {
  it("SMA is the mean of the last n closes, null with fewer candles", () => {
    const cs = candles([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(sma(cs, 5)).to.equal(8);
    expect(sma(cs, 10)).to.equal(5.5);
    expect(sma(cs, 11)).to.equal(null);
  });

  it("EMA weighs 2/(n+1), seeded with the first close, reported once n closes were seen", () => {
    // e1 = 1; e2 = 2*.5 + 1*.5 = 1.5; e3 = 2.25; e4 = 3.125; e5 = 4.0625
    expect(ema(candles([1, 2, 3, 4, 5]), 3)).to.equal(4.0625);
    expect(ema(candles([1, 2]), 3)).to.equal(null);
  });

  it("RSI is Wilder's: seeded by the mean of the first n changes, then smoothed by 1/n", () => {
    // changes +1, -1, +1 with n = 2: seed gain 0.5 / loss 0.5 (RSI 50), then gain .75 / loss .25: RS 3, RSI 75
    expect(rsi(candles([1, 2, 1, 2]), 2)).to.equal(75);
    expect(rsi(candles([1, 2, 1]), 2)).to.equal(50);
    expect(rsi(candles([1, 2]), 2)).to.equal(null);
    expect(rsi(candles(Array.from({ length: 20 }, (_, i) => 100 + i)), 14)).to.equal(100);

    // RSI 14 against an independent Wilder implementation over a bumpy series.
    const closes = Array.from({ length: 60 }, (_, i) => 100 + 10 * Math.sin(i / 3) + i / 4);
    const ch = closes.slice(1).map((c, i) => c - closes[i]!);
    let g = mean(ch.slice(0, 14).map((d) => Math.max(d, 0)));
    let l = mean(ch.slice(0, 14).map((d) => Math.max(-d, 0)));
    for (const d of ch.slice(14)) {
      g = (g * 13 + Math.max(d, 0)) / 14;
      l = (l * 13 + Math.max(-d, 0)) / 14;
    }
    expect(rsi(candles(closes), 14)).to.be.closeTo(100 - 100 / (1 + g / l), 1e-9);
    expect([rsiState(70), rsiState(30), rsiState(50)]).to.deep.equal(["overbought", "oversold", "neutral"]);
  });

  it("realized volatility is the sample stdev of log returns annualized over a 365-day year", () => {
    const a = 0.02;
    const closes = [100, 100 * Math.exp(a), 100, 100 * Math.exp(a), 100];
    const rv = realizedVolatility(candles(closes), "1d")!;
    expect(logReturns(candles(closes))).to.have.length(4);
    // returns a, -a, a, -a: mean 0, sample variance 4a²/3
    expect(rv.returns).to.equal(4);
    expect(rv.periodStdev).to.be.closeTo(Math.sqrt((4 * a * a) / 3), 1e-12);
    expect(rv.annualized).to.be.closeTo(Math.sqrt((4 * a * a) / 3) * Math.sqrt(365), 1e-12);
    expect(periodsPerYear("1h")).to.equal(8760);
    expect(realizedVolatility(candles([1, 2]), "1d")).to.equal(null);
  });

  it("max drawdown is the largest fall from a running peak, with its peak and trough", () => {
    const cs = candles([100, 120, 90, 130, 104]);
    const dd = maxDrawdown(cs);
    expect(dd.fraction).to.be.closeTo(0.25, 1e-12);
    expect(dd.peak).to.deep.equal({ time: cs[1]!.time, price: 120 });
    expect(dd.trough).to.deep.equal({ time: cs[2]!.time, price: 90 });
    expect(maxDrawdown(candles([1, 2, 3]))).to.deep.equal({ fraction: 0, peak: null, trough: null });
  });

  it("classifies the trend regime by the documented rule", () => {
    const up = Array.from({ length: 70 }, (_, i) => 100 + i);
    const down = up.map((c) => 300 - c);
    expect(trendRegime(candles(up)).regime).to.equal("uptrend");
    expect(trendRegime(candles(down)).regime).to.equal("downtrend");
    expect(trendRegime(candles(Array.from({ length: 70 }, () => 100))).regime).to.equal("sideways");
    // A rising trend whose last close falls below SMA20 is no longer an uptrend.
    expect(trendRegime(candles([...up.slice(0, 69), 150])).regime).to.equal("sideways");
    expect(trendRegime(candles(up.slice(0, 59))).regime).to.equal("undetermined");
    const r = trendRegime(candles(up));
    expect(r.smaShort).to.equal(mean(up.slice(-20)));
    expect(r.smaLong).to.equal(mean(up.slice(-50)));
    expect(r.smaLongSlope).to.be.closeTo(mean(up.slice(-50)) / mean(up.slice(-60, -10)) - 1, 1e-12);
    expect(regimeRule()).to.contain("close > SMA20 > SMA50");
  });

  it("finds the last SMA20/SMA50 crossover and the recent range", () => {
    const closes = [...Array.from({ length: 60 }, (_, i) => 200 - i), ...Array.from({ length: 40 }, (_, i) => 141 + 3 * i)];
    const cs = candles(closes);
    // Independent: the first candle (after both exist) where SMA20 - SMA50 turns positive.
    const s = (n: number, i: number) => mean(closes.slice(i - n + 1, i + 1));
    let crossAt = -1;
    for (let i = 50; i < closes.length; i++) if (s(20, i) > s(50, i) && s(20, i - 1) <= s(50, i - 1)) crossAt = i;
    expect(crossAt).to.be.greaterThan(0);
    expect(lastCrossover(cs, 20, 50)).to.deep.equal({ direction: "bullish", time: cs[crossAt]!.time });
    const range = recentRange(cs, 20)!;
    expect(range.high).to.deep.equal({ price: String(Math.max(...closes.slice(-20)) + 1), time: cs.at(-1)!.time });
    expect(range.low.price).to.equal(String(Math.min(...closes.slice(-21, -1)) - 1));
  });

  it("volatility levels follow the thresholds; windows use the newest candles", () => {
    const t = DEFAULT_THRESHOLDS;
    expect([levelOf(29.99, t), levelOf(30, t), levelOf(60, t), levelOf(99.9, t), levelOf(100, t)]).to.deep.equal(["low", "normal", "elevated", "elevated", "extreme"]);
    expect(highestLevel(["low", null, "elevated", "normal"])).to.equal("elevated");
    expect(highestLevel([null])).to.equal(null);
    const closes = Array.from({ length: 40 }, (_, i) => 100 * Math.exp((i % 2 ? 0.01 : -0.01) * (i > 30 ? 3 : 1)));
    const w = windowVolatility(VOLATILITY_WINDOWS[0], candles(closes, 3600), t, 3600);
    const r = candles(closes.slice(-25), 3600);
    expect(w.returns_used).to.equal(24);
    expect(w.annualized_pct).to.equal(Math.round(realizedVolatility(r, "1h")!.annualized * 100 * 10_000) / 10_000);
    const short = windowVolatility(VOLATILITY_WINDOWS[1], candles(closes, 3600), t, 3600);
    expect(short.returns_used).to.equal(39);
    expect(short.coverage).to.equal(Math.round((39 / 168) * 10_000) / 10_000);
  });

  it("analyzes a history: figures rounded as documented, range kept as venue strings", () => {
    const closes = Array.from({ length: 80 }, (_, i) => 100 + i + (i % 5));
    const a = analyzeHistory(candles(closes), "1d");
    expect(a.candles_used).to.equal(80);
    expect(a.moving_averages.sma_20).to.equal(Number(mean(closes.slice(-20)).toPrecision(10)));
    expect(a.regime.label).to.equal("uptrend");
    expect(a.change_pct).to.equal(Math.round((closes.at(-1)! / closes[0]! - 1) * 100 * 10_000) / 10_000);
    expect(a.to).to.equal(new Date((T0 + 80 * DAY) * 1000).toISOString());
    expect(a.recent_range!.resistance).to.be.a("string");
  });
});

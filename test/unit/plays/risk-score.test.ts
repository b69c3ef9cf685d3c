import { expect } from "chai";
import { bandOf, fits, riskScore, stanceOf } from "../../../src/plays/risk-score.js";

describe("investment plays: the risk score (0-100) and the stance rules", () => {
  it("sums the documented components, each capped", () => {
    expect(riskScore({ volatilityPct: 75, drawdownPct: 30, regime: "sideways", rsi: 75, spreadBps: 5, newsScore: 0.2 })).to.deep.equal({
      score: 45.5,
      band: "moderate",
      components: { volatility: 20, drawdown: 12.5, trend: 5, momentum: 5, liquidity: 1, sentiment: 2 },
    });
    const worst = riskScore({ volatilityPct: 400, drawdownPct: 95, regime: "downtrend", rsi: 0, spreadBps: 500, newsScore: -1 });
    expect(worst).to.deep.equal({ score: 100, band: "high", components: { volatility: 40, drawdown: 25, trend: 10, momentum: 10, liquidity: 10, sentiment: 5 } });
    const calm = riskScore({ volatilityPct: 0, drawdownPct: 0, regime: "uptrend", rsi: 50, spreadBps: 0, newsScore: 1 });
    expect(calm).to.deep.equal({ score: 0, band: "low", components: { volatility: 0, drawdown: 0, trend: 0, momentum: 0, liquidity: 0, sentiment: 0 } });
  });

  it("treats unknowns cautiously: no volatility is the cap, no RSI is 5, no news is neutral (2.5)", () => {
    const r = riskScore({ volatilityPct: null, drawdownPct: 0, regime: "undetermined", rsi: null, spreadBps: 0, newsScore: null });
    expect(r.components).to.deep.equal({ volatility: 40, drawdown: 0, trend: 6, momentum: 5, liquidity: 0, sentiment: 2.5 });
    expect(r.score).to.equal(53.5);
  });

  it("bands at 34 and 67 and fits a tolerance", () => {
    expect([bandOf(33.9), bandOf(34), bandOf(66.9), bandOf(67)]).to.deep.equal(["low", "moderate", "moderate", "high"]);
    expect([fits("low", "low"), fits("moderate", "low"), fits("moderate", "medium"), fits("high", "medium"), fits("high", "high")]).to.deep.equal([true, false, true, false, true]);
  });

  it("picks the first stance that applies", () => {
    expect(stanceOf("downtrend", "oversold", "negative")).to.equal("avoid");
    expect(stanceOf("uptrend", "overbought", "positive")).to.equal("wait_for_pullback");
    expect(stanceOf("downtrend", "oversold", "neutral")).to.equal("watch_for_reversal");
    expect(stanceOf("uptrend", "neutral", "negative")).to.equal("accumulate");
    expect(stanceOf("downtrend", "neutral", null)).to.equal("reduce");
    expect(stanceOf("sideways", "neutral", null)).to.equal("range_trade");
    expect(stanceOf("undetermined", null, null)).to.equal("no_clear_play");
  });
});

import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesAndNewsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { alternatingCloses, candlesFromCloses, VenueEmulator } from "../../fixtures/venue-emulator.js";
import { bandOf, fits, riskScore, stanceOf } from "../../../src/plays/risk-score.js";
import { DISCLAIMER, InvestmentPlaysOutput } from "../../../src/skus/crypto-investment-plays.js";

const SKU = "crypto.investment-plays";
const PRICE = 50_000n; // 0.05 USDC
const DAY = 86_400;

const sine = (start: number, n: number, amp: number, period: number) => Array.from({ length: n }, (_, i) => start + amp * Math.sin((2 * Math.PI * i) / period));

// BTC trends up (RSI ~62), ETH trends down with a deep drawdown, SOL moves sideways, XRP rallies hard
// (RSI ~87), NEW has five days of history, FOO is listed nowhere.
const emulator = new VenueEmulator({
  tickers: { coinbase: { "BTC-USD": "97011.50", "ETH-USD": "3501.00", "SOL-USD": "150.00", "XRP-USD": "0.6", "NEW-USD": "1.25" } },
  books: {
    coinbase: {
      "BTC-USD": { bid: "97010.01", bidSize: "0.5", ask: "97012.35", askSize: "1.25" },
      "ETH-USD": { bid: "3500.10", bidSize: "3", ask: "3501.90", askSize: "2" },
      "SOL-USD": { bid: "149.93", bidSize: "40", ask: "150.07", askSize: "35" },
      "XRP-USD": { bid: "0.6000", bidSize: "1000", ask: "0.6003", askSize: "900" },
      "NEW-USD": { bid: "1.24", bidSize: "100", ask: "1.26", askSize: "100" },
    },
  },
  candles: {
    "BTC-USD": { [DAY]: candlesFromCloses(alternatingCloses(60_000, 120, 0.03, 0.02), DAY) },
    "ETH-USD": { [DAY]: candlesFromCloses(alternatingCloses(4_000, 120, 0.02, 0.03), DAY) },
    "SOL-USD": { [DAY]: candlesFromCloses(sine(150, 120, 3, 7), DAY) },
    "XRP-USD": { [DAY]: candlesFromCloses(alternatingCloses(0.5, 120, 0.03, 0.005), DAY, 4) },
    "NEW-USD": { [DAY]: candlesFromCloses(alternatingCloses(1, 5, 0.01, 0.01), DAY) },
  },
});

describe("crypto.investment-plays: plays with a numeric risk score, the figures behind them and a disclaimer", function () {
  this.timeout(60_000);
  const up = venuesAndNewsForSuite(emulator, newsServer(), { PRICE_CACHE_SECONDS: "0" });
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("scores each asset by the documented model, picks the stance by the documented rules and ranks fitting plays first", async () => {
    const before = await up.balance();
    const res = await pay({ tickers: ["BTC", "eth", "SOL", "NEW", "FOO"], risk_tolerance: "low" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const d = res.body.deliverable;
    expect(InvestmentPlaysOutput.safeParse(d).success).to.equal(true);
    expect(d).to.include({ risk_tolerance: "low", venue: "coinbase", quote: "USD", interval: "1d", lookback: 120, disclaimer: DISCLAIMER });
    expect(d.disclaimer).to.match(/^Not financial advice\./);
    expect(d.risk_model.components_max).to.deep.equal({ volatility: 40, drawdown: 25, trend: 10, momentum: 10, liquidity: 10, sentiment: 5 });
    expect(d.news_feeds).to.deep.equal({ read: 4, failed: 3 });

    const by = Object.fromEntries(d.plays.map((p: Json) => [p.asset, p]));
    expect(Object.keys(by).sort()).to.deep.equal(["BTC", "ETH", "SOL"]);
    expect([by.BTC.figures.regime, by.ETH.figures.regime, by.SOL.figures.regime]).to.deep.equal(["uptrend", "downtrend", "sideways"]);
    expect([by.BTC.stance, by.ETH.stance, by.SOL.stance]).to.deep.equal(["accumulate", "reduce", "range_trade"]);
    // News: BTC's stories lean negative, ETH has one neutral story, SOL none.
    expect([by.BTC.figures.news_label, by.BTC.figures.news_stories]).to.deep.equal(["negative", 6]);
    expect([by.ETH.figures.news_label, by.ETH.figures.news_stories, by.ETH.figures.news_score]).to.deep.equal(["neutral", 1, 0]);
    expect([by.SOL.figures.news_label, by.SOL.figures.news_stories, by.SOL.figures.news_score]).to.deep.equal([null, 0, null]);
    expect(by.ETH.headlines.map((h: Json) => h.title)).to.deep.equal(["Ethereum developers schedule upgrade"]);
    expect(by.SOL.figures.spread_bps).to.equal(9.33);

    for (const p of d.plays) {
      const f = p.figures;
      const expected = riskScore({ volatilityPct: f.realized_volatility_annualized_pct, drawdownPct: f.max_drawdown_pct, regime: f.regime, rsi: f.rsi_14, spreadBps: f.spread_bps, newsScore: f.news_score });
      expect(p.risk, p.asset).to.deep.equal(expected);
      expect(p.risk.score).to.be.within(0, 100);
      expect(p.risk.band).to.equal(bandOf(p.risk.score));
      expect(p.fits_risk_tolerance).to.equal(fits(p.risk.band, "low"));
      expect(p.stance).to.equal(stanceOf(f.regime, f.rsi_14 >= 70 ? "overbought" : f.rsi_14 <= 30 ? "oversold" : "neutral", f.news_label));
      expect(p.levels.candles).to.equal(20);
      expect(p.sources.candles.endpoint).to.match(/\/coinbase\/products\/[A-Z]+-USD\/candles\?granularity=86400$/);
      expect(p.rationale.length).to.equal(5);
    }
    expect(by.ETH.risk.band).to.equal("moderate");
    expect(by.ETH.risk.components.trend).to.equal(10);
    expect([by.BTC.risk.band, by.SOL.risk.band]).to.deep.equal(["low", "low"]);
    // Fitting plays first, least risky first.
    const order = d.plays.map((p: Json) => [p.fits_risk_tolerance, p.risk.score]);
    expect(order).to.deep.equal([...order].sort((a: any[], b: any[]) => Number(b[0]) - Number(a[0]) || a[1] - b[1]));
    expect(d.plays.at(-1).asset).to.equal("ETH");

    expect(d.unavailable.map((u: Json) => u.asset)).to.deep.equal(["NEW", "FOO"]);
    expect(d.unavailable[0].reason).to.match(/needs at least 20/);
    expect(d.unavailable[1].reason).to.match(/^coinbase: HTTP 404/);
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("an overbought asset waits for a pullback; tickers may come from the task", async () => {
    const res = await pay({ task: "Plays for XRP please", risk_tolerance: "high" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const [xrp] = res.body.deliverable.plays;
    expect(xrp).to.deep.include({ asset: "XRP", pair: "XRP-USD", stance: "wait_for_pullback", fits_risk_tolerance: true });
    expect(xrp.figures.rsi_14).to.be.at.least(70);
  });

  it("charges nothing when no asset can be read (503), every asset lacks history (409) or the venue rate-limits every read (503)", async () => {
    const before = await up.balance();
    const unknown = await pay({ tickers: ["FOO"] });
    expect(unknown.status).to.equal(503);
    const short = await pay({ ticker: "NEW" });
    expect(short.status).to.equal(409);
    expect(short.body.error.code).to.equal("insufficient_history");
    emulator.fault("coinbase", "book", "*", "rate_limit");
    const limited = await pay({ tickers: ["BTC", "ETH"] });
    expect(limited.status).to.equal(503);
    emulator.faults.clear();
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input before any challenge and charges nothing (400 naming the field)", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "tickers"],
      [{ task: "give me some plays" }, "tickers"],
      [{ tickers: [] }, "tickers"],
      [{ tickers: ["BTC", "ETH", "SOL", "ADA", "DOT", "XRP"] }, "tickers"],
      [{ tickers: ["B"] }, "tickers.0"],
      [{ tickers: ["BTC"], risk_tolerance: "yolo" }, "risk_tolerance"],
      [{ tickers: ["USD"] }, "quote"],
      [{ tickers: ["BTC"], venue: "ftx" }, "venue"],
    ]);
  });
});

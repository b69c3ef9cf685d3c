import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesForSuite } from "../../fixtures/market-news-upstream.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { candlesFromCloses, VenueEmulator } from "../../fixtures/venue-emulator.js";
import { expectedVolatilityPct } from "../../fixtures/volatility-math.js";

const SKU = "oracle.volatility-monitor";
const PRICE = 40_000n; // $0.04 in USDC atomic units
const HOUR = 3600;
const DAY = 86_400;

/** Closes from per-candle log returns, starting at `start`. */
function walk(start: number, returns: number[]): number[] {
  const out = [start];
  for (const r of returns) out.push(out.at(-1)! * Math.exp(r));
  return out;
}

// Hourly: calm for six days (±0.3 % an hour), stormy for the last 24 hours (±2 %); daily: calm (±1 % a day).
const hourly = candlesFromCloses(walk(97_000, Array.from({ length: 168 }, (_, i) => (i % 2 ? 1 : -1) * (i >= 144 ? 0.02 : 0.003))), HOUR);
const daily = candlesFromCloses(walk(90_000, Array.from({ length: 30 }, (_, i) => (i % 2 ? 1 : -1) * 0.01)), DAY);

const emulator = new VenueEmulator({
  candles: {
    "BTC-USD": { [HOUR]: hourly, [DAY]: daily },
    "NEW-USD": { [HOUR]: hourly.slice(-2), [DAY]: daily.slice(-2) },
    "XRP-USD": { [HOUR]: hourly, [DAY]: daily },
  },
});

describe("oracle.volatility-monitor: realized volatility over 24h, 7d and 30d with levels and thresholds", function () {
  this.timeout(60_000);
  const up = venuesForSuite(emulator);
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("computes each window from closed candles, levels it by the default thresholds and cites the reads", async () => {
    const before = await up.balance();
    const r = await pay({ pair: "BTC-USD" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.deliverable;
    const [h24, d7, d30] = d.windows;
    const p24 = expectedVolatilityPct(hourly, 24, 8760);
    const p7 = expectedVolatilityPct(hourly, 168, 8760);
    const p30 = expectedVolatilityPct(daily, 30, 365);
    expect(h24).to.include({ window: "24h", interval: "1h", returns_expected: 24, returns_used: 24, coverage: 1, annualized_pct: p24, level: "extreme" });
    expect(d7).to.include({ window: "7d", interval: "1h", returns_used: 168, annualized_pct: p7, level: "elevated" });
    expect(d30).to.include({ window: "30d", interval: "1d", returns_used: 30, annualized_pct: p30, level: "low" });
    expect([p24 >= 100, p7 >= 60 && p7 < 100, p30 < 30]).to.deep.equal([true, true, true]);
    expect(h24.from).to.equal(new Date(hourly.at(-25)!.time * 1000).toISOString());
    expect(h24.to).to.equal(new Date((hourly.at(-1)!.time + HOUR) * 1000).toISOString());
    expect(h24.source).to.include({ name: "Coinbase Exchange", venue: "coinbase", cached: false });
    expect(h24.source.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/candles\?granularity=3600$/);
    expect(d30.source.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/candles\?granularity=86400$/);
    expect(d).to.include({ pair: "BTC-USD", venue: "coinbase", venue_symbol: "BTC-USD", level: "extreme", alert: true });
    expect(d.alerts).to.deep.equal([`24h realized volatility ${p24}% a year is extreme (>= 100%)`, `7d realized volatility ${p7}% a year is elevated (>= 60%)`]);
    expect(d.thresholds).to.deep.equal({ low_below_pct: 30, elevated_from_pct: 60, extreme_from_pct: 100, set_by: "default" });
    expect(d.level_rule).to.contain("extreme from extreme_from_pct");
    expect(d.method).to.contain("sqrt(8760)");

    // A repeat within the candle cache reuses the reads and says so.
    const reads = emulator.count("coinbase", "candles");
    const again = (await pay({ ticker: "BTC" })).body.deliverable;
    expect(emulator.count("coinbase", "candles")).to.equal(reads);
    expect(again.windows[0].source.cached).to.equal(true);
    expect(again.windows[0].annualized_pct).to.equal(p24);

    // The buyer's thresholds move the levels.
    const own = (await pay({ pair: "BTC-USD", venue: "kraken", thresholds: { extreme_from_pct: 1000, elevated_from_pct: 150 } })).body.deliverable;
    expect(own.windows.map((w: Json) => w.level)).to.deep.equal(["elevated", "normal", "low"]);
    expect(own.thresholds).to.deep.equal({ low_below_pct: 30, elevated_from_pct: 150, extreme_from_pct: 1000, set_by: "buyer" });
    expect(own.venue_symbol).to.equal("XXBTZUSD");
    expect(own.windows[0].annualized_pct).to.equal(p24);
    expect(own.windows[2].source.endpoint).to.match(/\/kraken\/0\/public\/OHLC\?pair=XBTUSD&interval=1440$/);

    const bn = (await pay({ pair: "BTC-USD", venue: "binance" })).body.deliverable;
    expect(bn.windows[1].annualized_pct).to.equal(p7);
    expect(bn.windows[0].source.endpoint).to.match(/\/binance\/api\/v3\/klines\?symbol=BTCUSDT&interval=1h&limit=170$/);
    expect(bn.quote_note).to.contain("USDT");

    expect(await up.balance()).to.equal(before - 4n * PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("charges nothing when the venue rate-limits or answers garbage, or the pair has too little history", async () => {
    const before = await up.balance();
    emulator.fault("coinbase", "candles", "XRP-USD", "rate_limit");
    const limited = await pay({ pair: "XRP-USD" });
    expect(limited.status).to.equal(503);
    expect(limited.body.error.code).to.equal("service_failed");
    emulator.fault("kraken", "candles", "XRP-USD", "malformed");
    expect((await pay({ pair: "XRP-USD", venue: "kraken" })).status).to.equal(503);
    const young = await pay({ pair: "NEW-USD" });
    expect(young.status).to.equal(409);
    expect(young.body.error.code).to.equal("insufficient_history");
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input with the field before any challenge or charge", async () => {
    await expectBadInputRefused(up, SKU, [
      [{ venue: "coinbase" }, "pair"],
      [{ pair: "BTC-USD", venue: "ftx" }, "venue"],
      [{ pair: "BTC-USD", thresholds: { low_below_pct: 80 } }, "thresholds"],
      [{ pair: "BTC-USD", thresholds: { extreme_from_pct: -5 } }, "thresholds.extreme_from_pct"],
      [{ pair: "BTC-USD", thresholds: { typo_pct: 5 } }, "thresholds"],
    ]);
    // Through the paying client too: refused before any payment.
    const before = await up.balance();
    expect((await pay({ pair: 7 })).status).to.equal(400);
    expect(await up.balance()).to.equal(before);
  });
});

import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesForSuite } from "../../fixtures/market-news-upstream.js";
import { expectBadInputRefused } from "../../fixtures/sku-calls.js";
import { candlesFromCloses, VenueEmulator } from "../../fixtures/venue-emulator.js";

const SKU = "oracle.historical-analysis";
const PRICE = 80_000n; // $0.08 in USDC atomic units
const HOUR = 3600;
const DAY = 86_400;

// 150 daily closes: a slide from 110 000 to about 80 000 over 90 days, then a recovery with a wobble.
const closes = Array.from({ length: 150 }, (_, i) => (i < 90 ? 110_000 - 340 * i : 79_400 + 520 * (i - 90)) + 900 * Math.sin(i / 2));
const daily = candlesFromCloses(closes, DAY);
const hourly = candlesFromCloses(closes.slice(-40).map((c) => c / 10), HOUR);

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sig = (n: number) => Number(n.toPrecision(10));
const pct = (n: number) => Math.round(n * 100 * 10_000) / 10_000;
const iso = (t: number) => new Date(t * 1000).toISOString();

/** Every figure recomputed independently from the served closes (the 120 newest daily candles). */
function expected() {
  const used = daily.slice(-120);
  const c = used.map((x) => Number(x.close));
  let e20 = c[0]!;
  let e50 = c[0]!;
  for (const p of c) {
    e20 = p * (2 / 21) + e20 * (1 - 2 / 21);
    e50 = p * (2 / 51) + e50 * (1 - 2 / 51);
  }
  const ch = c.slice(1).map((p, i) => p - c[i]!);
  let g = mean(ch.slice(0, 14).map((d) => Math.max(d, 0)));
  let l = mean(ch.slice(0, 14).map((d) => Math.max(-d, 0)));
  for (const d of ch.slice(14)) {
    g = (g * 13 + Math.max(d, 0)) / 14;
    l = (l * 13 + Math.max(-d, 0)) / 14;
  }
  let peak = 0;
  let dd = { f: 0, peak: 0, trough: 0 };
  c.forEach((p, i) => {
    if (p > c[peak]!) peak = i;
    if ((c[peak]! - p) / c[peak]! > dd.f) dd = { f: (c[peak]! - p) / c[peak]!, peak, trough: i };
  });
  const last20 = used.slice(-20);
  const hi = last20.reduce((a, b) => (Number(b.high) > Number(a.high) ? b : a));
  const lo = last20.reduce((a, b) => (Number(b.low) < Number(a.low) ? b : a));
  return { used, c, sma20: mean(c.slice(-20)), sma50: mean(c.slice(-50)), e20, e50, rsi: 100 - 100 / (1 + g / l), dd, hi, lo };
}

const emulator = new VenueEmulator({
  candles: {
    "BTC-USD": { [DAY]: daily, [HOUR]: hourly },
    "NEW-USD": { [DAY]: daily.slice(-10) },
  },
});

describe("oracle.historical-analysis: moving averages, RSI, drawdown, regime and range over candles", function () {
  this.timeout(60_000);
  const up = venuesForSuite(emulator);
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("analyzes the newest daily candles and cites the read (default venue, interval and lookback)", async () => {
    const before = await up.balance();
    const r = await pay({ pair: "BTC-USD" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.deliverable;
    const x = expected();
    expect(d).to.include({ pair: "BTC-USD", venue: "coinbase", venue_symbol: "BTC-USD", interval: "1d", lookback_requested: 120, candles_used: 120 });
    expect(d.from).to.equal(iso(x.used[0]!.time));
    expect(d.to).to.equal(iso(x.used.at(-1)!.time + DAY));
    expect(Number(d.last_close)).to.equal(x.c.at(-1)); // the in-progress candle (close x10) never counts
    expect(d.change_pct).to.equal(pct(x.c.at(-1)! / x.c[0]! - 1));
    expect(d.moving_averages).to.deep.equal({
      sma_20: sig(x.sma20),
      sma_50: sig(x.sma50),
      ema_20: sig(x.e20),
      ema_50: sig(x.e50),
      close_vs_sma_20_pct: pct(x.c.at(-1)! / x.sma20 - 1),
      close_vs_sma_50_pct: pct(x.c.at(-1)! / x.sma50 - 1),
    });
    expect(d.rsi_14).to.be.closeTo(x.rsi, 0.005);
    expect(d.max_drawdown).to.deep.equal({ pct: pct(x.dd.f), peak_time: iso(x.used[x.dd.peak]!.time), peak_close: x.c[x.dd.peak], trough_time: iso(x.used[x.dd.trough]!.time), trough_close: x.c[x.dd.trough] });
    expect(d.regime.label).to.equal("uptrend");
    expect(d.regime.rule).to.contain("close > SMA20 > SMA50");
    expect(d.last_sma_crossover.direction).to.equal("bullish");
    expect(Number(d.recent_range.resistance)).to.equal(Number(x.hi.high));
    expect(d.recent_range.resistance_time).to.equal(iso(x.hi.time));
    expect(Number(d.recent_range.support)).to.equal(Number(x.lo.low));
    expect(d.source).to.include({ name: "Coinbase Exchange", venue: "coinbase", cached: false });
    expect(d.source.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/candles\?granularity=86400$/);
    expect(d.quote_note).to.equal(null);

    // Kraken keeps its decimal strings; a shorter hourly lookback on another venue.
    const kr = (await pay({ pair: "BTC/USD", venue: "kraken", interval: "1h", lookback: 30 })).body.deliverable;
    expect(kr).to.include({ venue_symbol: "XXBTZUSD", interval: "1h", candles_used: 30, last_close: hourly.at(-1)!.close, first_close: hourly.at(-30)!.close });
    expect(kr.recent_range.support).to.equal(hourly.slice(-20).reduce((a, b) => (Number(b.low) < Number(a.low) ? b : a)).low);
    expect(kr.moving_averages.sma_50).to.equal(null); // 30 candles: no SMA50, and so no regime
    expect(kr.regime.label).to.equal("undetermined");
    expect(kr.source.endpoint).to.match(/\/kraken\/0\/public\/OHLC\?pair=XBTUSD&interval=60$/);

    expect(await up.balance()).to.equal(before - 2n * PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("charges nothing when the venue fails or the pair has too little history", async () => {
    const before = await up.balance();
    emulator.fault("binance", "candles", "BTC-USD", "rate_limit");
    expect((await pay({ pair: "BTC-USD", venue: "binance" })).status).to.equal(503);
    emulator.fault("coinbase", "candles", "BTC-USD", "bad_candle");
    expect((await pay({ pair: "BTC-USD", lookback: 60 })).status).to.equal(503);
    const young = await pay({ pair: "NEW-USD" });
    expect(young.status).to.equal(409);
    expect(young.body.error.code).to.equal("insufficient_history");
    expect(young.body.error.message).to.contain("10 closed 1d candles");
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input with the field before any challenge or charge", async () => {
    await expectBadInputRefused(up, SKU, [
      [{ interval: "1d" }, "pair"],
      [{ pair: "BTC-USD", interval: "2h" }, "interval"],
      [{ pair: "BTC-USD", lookback: 10 }, "lookback"],
      [{ pair: "BTC-USD", lookback: 400 }, "lookback"],
      [{ pair: "BTC-USD", lookback: 50.5 }, "lookback"],
      [{ pair: "BTC-USD", venue: "bitstamp" }, "venue"],
    ]);
  });
});

import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesAndNewsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { candlesFromCloses, VenueEmulator } from "../../fixtures/venue-emulator.js";
import { expectedVolatilityPct } from "../../fixtures/volatility-math.js";

const SKU = "oracle.comprehensive-report";
const PRICE = 200_000n; // $0.20 in USDC atomic units
const HOUR = 3600;
const DAY = 86_400;

const hourly = candlesFromCloses(Array.from({ length: 200 }, (_, i) => 96_000 + 40 * i + (i % 2 ? 300 : -300)), HOUR);
const daily = candlesFromCloses(Array.from({ length: 150 }, (_, i) => 70_000 + 180 * i + 1500 * Math.sin(i / 3)), DAY);

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const emulator = new VenueEmulator({
  tickers: {
    coinbase: { "BTC-USD": "97011.50", "ETH-USD": "3500.25", "SOL-USD": "180.00" },
    kraken: { "BTC-USD": "97015.00000", "ETH-USD": "3501.00000" },
    binance: { "BTC-USD": "97008.42000000" },
  },
  books: {
    coinbase: { "BTC-USD": { bid: "97010.01", bidSize: "0.51", ask: "97012.35", askSize: "0.2" }, "ETH-USD": { bid: "3500.00", bidSize: "1", ask: "3500.50", askSize: "1" } },
    kraken: { "BTC-USD": { bid: "97014.90000", bidSize: "2.000", ask: "97015.10000", askSize: "1.000" } },
    binance: { "BTC-USD": { bid: "97008.40000000", bidSize: "1.20000000", ask: "97008.42000000", askSize: "0.03000000" } },
  },
  candles: { "BTC-USD": { [HOUR]: hourly, [DAY]: daily }, "ETH-USD": { [HOUR]: hourly, [DAY]: daily }, "SOL-USD": { [HOUR]: hourly, [DAY]: daily } },
});

describe("oracle.comprehensive-report: price, volatility, history, arbitrage and news sentiment, every figure cited", function () {
  this.timeout(60_000);
  const up = venuesAndNewsForSuite(emulator, newsServer());
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("combines every section from the venues' reads and cites each figure in the markdown", async () => {
    const before = await up.balance();
    const r = await pay({ ticker: "BTC" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.deliverable;
    expect(d).to.include({ pair: "BTC-USD", title: "BTC-USD market report" });

    // Price across venues: median of the three, extremes exact as the venues wrote them.
    expect(d.price.venues.map((v: Json) => [v.venue, v.status, v.price])).to.deep.equal([
      ["coinbase", "ok", "97011.50"],
      ["kraken", "ok", "97015.00000"],
      ["binance", "ok", "97008.42000000"],
    ]);
    expect(d.price).to.deep.include({ median: 97011.5, low: { venue: "binance", price: "97008.42000000" }, high: { venue: "kraken", price: "97015.00000" }, dispersion_bps: Math.round(((97015 - 97008.42) / 97011.5) * 1e6) / 100 });
    expect(d.price.venues[1].source.endpoint).to.match(/\/kraken\/0\/public\/Ticker\?pair=XBTUSD$/);

    // Volatility and history from Coinbase's candles.
    expect(d.candle_venue).to.deep.equal({ venue: "coinbase", requested: "coinbase", fallback_reason: null });
    expect(d.volatility.windows.map((w: Json) => w.annualized_pct)).to.deep.equal([expectedVolatilityPct(hourly, 24, 8760), expectedVolatilityPct(hourly, 168, 8760), expectedVolatilityPct(daily, 30, 365)]);
    const used = daily.slice(-120).map((c) => Number(c.close));
    expect(d.history).to.include({ interval: "1d", candles_used: 120, last_close: String(used.at(-1)) });
    expect(d.history.moving_averages.sma_20).to.equal(Number(mean(used.slice(-20)).toPrecision(10)));
    expect(d.history.source.endpoint).to.match(/granularity=86400$/);

    // Arbitrage from the three books: buy Binance at 97008.42, sell Kraken at 97014.90 (not enough for 50 bps of fees).
    expect(d.arbitrage.status).to.equal("ok");
    expect(d.arbitrage.best).to.include({ buy_venue: "binance", sell_venue: "kraken", gross_spread: "6.48", taker_fees_bps: 50, profitable: false });

    // News sentiment over the crypto and business feeds.
    expect(d.sentiment.status).to.equal("ok");
    expect(d.sentiment.stories).to.be.greaterThan(0);
    expect(d.sentiment.channels).to.deep.equal(["crypto", "business"]);
    expect(d.sentiment.label).to.be.oneOf(["positive", "neutral", "negative"]);
    expect(d.sentiment.headlines.length).to.be.within(1, 5);

    // Citations: every [n] names a listed read, every read is cited, every figure line carries one.
    const md: string = d.content_markdown;
    const ids = new Set([...md.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
    expect([...ids].sort((a, b) => a - b)).to.deep.equal(d.sources.map((s: Json) => s.id));
    for (const s of d.sources) {
      expect(s.endpoint).to.match(/^http:\/\/127\.0\.0\.1:\d+\//);
      expect(md).to.contain(`${s.id}. ${s.name} ${s.read}: ${s.endpoint}`);
    }
    const figureLines = md.split("\n").filter((l) => (l.startsWith("- ") || l.startsWith("| ") || l.startsWith("Median") || l.startsWith("Best")) && /\d/.test(l) && !l.startsWith("|---") && !l.startsWith("| Venue"));
    expect(figureLines.length).to.be.greaterThan(10);
    for (const l of figureLines) expect(l, l).to.match(/\[\d+\]/);
    expect(d.sources.filter((s: Json) => s.read === "ticker")).to.have.length(3);
    expect(d.sources.filter((s: Json) => s.read === "order book")).to.have.length(2); // the two venues of the best spread
    expect(d.sources.filter((s: Json) => s.read === "news feed").length).to.be.greaterThan(0);
    expect(md).to.contain("## Sources");
    expect(d.quote_note).to.contain("USDT");
    if (process.env.SHOW_REPORT) console.log(md);

    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("falls back to another venue's candles and reports arbitrage unavailable with fewer than two books", async () => {
    emulator.fault("coinbase", "candles", "ETH-USD", "rate_limit");
    const r = await pay({ pair: "ETH-USD" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.deliverable;
    expect(d.candle_venue).to.deep.equal({ venue: "kraken", requested: "coinbase", fallback_reason: "coinbase: rate limited (HTTP 429)" });
    expect(d.volatility.venue).to.equal("kraken");
    expect(d.history.source.endpoint).to.match(/\/kraken\/0\/public\/OHLC\?pair=ETHUSD&interval=1440$/);
    expect(d.price.venues.find((v: Json) => v.venue === "binance")).to.deep.include({ status: "unavailable" });
    expect(d.price.median).to.equal(3500.625);
    expect(d.arbitrage).to.deep.include({ status: "unavailable" });
    expect(d.arbitrage.reason).to.match(/only 1 of 3 venues answered/);
    expect(d.content_markdown).to.contain("## Cross-venue arbitrage\n\nUnavailable: ");
  });

  it("charges nothing when no venue gives a price or candles", async () => {
    const before = await up.balance();
    const none = await pay({ pair: "DOGE-USD" });
    expect(none.status).to.equal(503);
    expect(none.body.error.code).to.equal("service_failed");
    for (const v of ["coinbase", "kraken", "binance"] as const) emulator.fault(v, "candles", "SOL-USD", "malformed");
    expect((await pay({ pair: "SOL-USD" })).status).to.equal(503);
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input with the field before any challenge or charge", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "pair"],
      [{ ticker: "B" }, "ticker"],
      [{ task: "a report on bitcoin please" }, "pair"],
      [{ pair: "BTC-USD", venue: "mtgox" }, "venue"],
    ]);
  });
});

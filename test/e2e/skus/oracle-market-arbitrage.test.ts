import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesForSuite } from "../../fixtures/market-news-upstream.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { VenueEmulator } from "../../fixtures/venue-emulator.js";

const SKU = "oracle.market-arbitrage";
const PRICE = 100_000n; // $0.10 in USDC atomic units

const bps = (n: number) => Math.round(n * 100) / 100;

// Order books of three pairs on the three venues, in each venue's format (test/fixtures/venue-emulator.ts).
const emulator = new VenueEmulator({
  books: {
    coinbase: {
      "BTC-USD": { bid: "97000.00", bidSize: "0.40", ask: "97001.00", askSize: "0.10" },
      "ETH-USD": { bid: "3500.00", bidSize: "3", ask: "3500.50", askSize: "3" },
      "SOL-USD": { bid: "180.00", bidSize: "10", ask: "180.10", askSize: "10" },
      "DOGE-USD": { bid: "0.3000", bidSize: "1000", ask: "0.3001", askSize: "1000" },
    },
    kraken: {
      "BTC-USD": { bid: "97800.00000", bidSize: "0.250", ask: "97801.00000", askSize: "1.000" },
      "ETH-USD": { bid: "3501.00000", bidSize: "2.000", ask: "3501.50000", askSize: "2.000" },
      "SOL-USD": { bid: "181.00000", bidSize: "5.000", ask: "181.10000", askSize: "5.000" },
    },
    binance: {
      "BTC-USD": { bid: "96990.00000000", bidSize: "2.00000000", ask: "96991.00000000", askSize: "0.05000000" },
      "ETH-USD": { bid: "3499.90000000", bidSize: "4.00000000", ask: "3500.00000000", askSize: "4.00000000" },
      "SOL-USD": { bid: "179.90000000", bidSize: "8.00000000", ask: "180.00000000", askSize: "8.00000000" },
    },
  },
});

describe("oracle.market-arbitrage: cross-venue spreads from the three venues' order-book tops", function () {
  this.timeout(60_000);
  // Kraken's taker fee set by the operator (25 bps) instead of the 40 bps default.
  const up = venuesForSuite(emulator, { MARKET_KRAKEN_TAKER_FEE_BPS: "25", PRICE_CACHE_SECONDS: "0" });
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("finds the best spread, nets both taker fees (operator settings, defaults, buyer overrides) and cites each book", async () => {
    const before = await up.balance();
    const r = await pay({ pair: "BTC-USD" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const d = r.body.deliverable;
    expect(d.pair).to.equal("BTC-USD");
    const kraken = d.venues.find((v: Json) => v.venue === "kraken");
    expect(kraken).to.deep.include({ status: "ok", venue_symbol: "XXBTZUSD", bid: "97800.00000", bid_size: "0.250", ask: "97801.00000", taker_fee_bps: 25, taker_fee_source: "operator" });
    expect(kraken.source).to.include({ name: "Kraken", venue: "kraken", cached: false });
    expect(kraken.source.endpoint).to.match(/\/kraken\/0\/public\/Depth\?pair=XBTUSD&count=1$/);
    expect(Date.parse(kraken.source.fetched_at)).to.be.a("number").and.not.NaN;
    expect(d.venues.find((v: Json) => v.venue === "coinbase")).to.deep.include({ taker_fee_bps: 60, venue_symbol: "BTC-USD", venue_time: "2026-11-22T01:00:00.123Z" });
    expect(d.venues.find((v: Json) => v.venue === "binance")).to.deep.include({ taker_fee_bps: 10, venue_symbol: "BTCUSDT", ask: "96991.00000000" });
    expect(d.venues.find((v: Json) => v.venue === "binance").source.endpoint).to.match(/\/binance\/api\/v3\/depth\?symbol=BTCUSDT&limit=5$/);

    // Buy Binance at 96991, sell Kraken at 97800: 809 quote units.
    const gross = ((97800 - 96991) / 96991) * 1e4;
    const exit = ((96990 - 97801) / 97801) * 1e4;
    expect(d.best).to.deep.equal({
      buy_venue: "binance",
      sell_venue: "kraken",
      buy_ask: "96991.00000000",
      sell_bid: "97800.00000",
      gross_spread: "809",
      gross_spread_bps: bps(gross),
      taker_fees_bps: 35,
      entry_spread_net_bps: bps(gross - 35),
      exit_spread_gross_bps: bps(exit),
      exit_spread_net_bps: bps(exit - 35),
      round_trip_net_bps: bps(gross - 35 + exit - 35),
      executable_size: "0.05000000",
      profitable: true,
    });
    expect(d.opportunities).to.have.length(6);
    expect(d).to.include({ profitable: true, note: null });
    expect(d.quote_note).to.contain("USDT");
    expect(d.method).to.contain("taker fee");

    // The buyer's own fee tier replaces the operator's.
    const own = (await pay({ ticker: "BTC", taker_fee_bps: { binance: 0, kraken: 0 } })).body.deliverable;
    expect(own.venues.find((v: Json) => v.venue === "kraken")).to.include({ taker_fee_bps: 0, taker_fee_source: "buyer" });
    expect(own.best).to.include({ taker_fees_bps: 0, entry_spread_net_bps: bps(gross) });

    expect(await up.balance()).to.equal(before - 2n * PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("flags a pair whose spreads do not cover the fees", async () => {
    const r = await pay({ pair: "ETH/USD", venues: ["coinbase", "kraken"] });
    expect(r.status).to.equal(200);
    const d = r.body.deliverable;
    expect(d.venues.map((v: Json) => v.venue)).to.deep.equal(["coinbase", "kraken"]);
    expect(d.best).to.include({ buy_venue: "coinbase", sell_venue: "kraken", gross_spread: "0.5", taker_fees_bps: 85, profitable: false });
    expect(d.profitable).to.equal(false);
    expect(d.note).to.match(/^no profitable spread: the best gross spread \(1\.43 bps, coinbase to kraken\) does not cover the taker fees \(85 bps\)$/);
    expect(d.quote_note).to.equal(null);
  });

  it("reports a failing venue as unavailable when two venues answered", async () => {
    emulator.fault("kraken", "book", "SOL-USD", "rate_limit");
    const r = await pay({ pair: "SOL-USD" });
    expect(r.status).to.equal(200);
    const d = r.body.deliverable;
    expect(d.venues.find((v: Json) => v.venue === "kraken")).to.deep.equal({ venue: "kraken", status: "unavailable", error: "kraken: rate limited: EAPI:Rate limit exceeded" });
    expect(d.opportunities).to.have.length(2);
    expect(d.best).to.include({ buy_venue: "binance", sell_venue: "coinbase", gross_spread: "0", profitable: false });
    expect(d.note).to.equal("no profitable spread: no venue's bid is above another venue's ask");
  });

  it("fails uncharged (503) when fewer than two venues answer: rate limits, malformed books, unknown pairs", async () => {
    const before = await up.balance();
    emulator.fault("binance", "book", "BTC-USD", "rate_limit");
    emulator.fault("kraken", "book", "BTC-USD", "malformed");
    const twoDown = await pay({ pair: "BTC-USD" });
    expect(twoDown.status).to.equal(503);
    expect(twoDown.body.error.code).to.equal("service_failed");
    const unknown = await pay({ pair: "DOGE-USD" }); // only Coinbase lists it
    expect(unknown.status).to.equal(503);
    emulator.faults.clear();
    emulator.fault("coinbase", "book", "*", "not_json");
    emulator.fault("binance", "book", "*", "ban");
    expect((await pay({ pair: "ETH-USD" })).status).to.equal(503);
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input with the field before any challenge or charge", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "pair"],
      [{ pair: "BTCUSD" }, "pair"],
      [{ pair: "BTC-BTC" }, "pair"],
      [{ pair: "BTC-USD", venues: ["coinbase"] }, "venues"],
      [{ pair: "BTC-USD", venues: ["coinbase", "coinbase"] }, "venues"],
      [{ pair: "BTC-USD", venues: ["coinbase", "ftx"] }, "venues.1"],
      [{ pair: "BTC-USD", taker_fee_bps: { ftx: 1 } }, "taker_fee_bps"],
      [{ pair: "BTC-USD", taker_fee_bps: { kraken: -1 } }, "taker_fee_bps.kraken"],
    ]);
    // Through the paying client too: refused before any payment.
    const before = await up.balance();
    expect((await pay({ pair: "BTCUSD" })).status).to.equal(400);
    expect(await up.balance()).to.equal(before);
  });
});

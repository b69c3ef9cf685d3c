import { expect } from "chai";
import http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectFailuresUncharged } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";
import { venueEnv } from "../../fixtures/venue-emulator.js";

const SKU = "oracle.price-feed";

// Three exchanges on loopback, answering in each venue's documented format, errors included.
const reads: string[] = [];
const venues: http.RequestListener = (req, res) => {
    const url = new URL(req.url!, "http://x");
    reads.push(url.pathname + url.search);
    const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(typeof body === "string" ? body : JSON.stringify(body));
    if (url.pathname === "/coinbase/products/BTC-USD/ticker") return send(200, { ask: "97012.35", bid: "97010.01", volume: "8123.1", trade_id: 7781, price: "97011.50", size: "0.01", time: "2026-11-22T01:00:00.000Z" });
    if (url.pathname === "/coinbase/products/ETH-USD/ticker") return send(200, { price: "not-a-number" });
    if (url.pathname.startsWith("/coinbase/products/")) return send(404, { message: "NotFound" });
    if (url.pathname === "/kraken/0/public/Ticker") {
      if (url.searchParams.get("pair") === "XBTUSD") return send(200, { error: [], result: { XXBTZUSD: { a: ["97015.10000", "1", "1.000"], b: ["97014.90000", "2", "2.000"], c: ["97015.00000", "0.0012"], v: ["1", "2"] } } });
      return send(200, { error: ["EQuery:Unknown asset pair"] });
    }
    if (url.pathname === "/binance/api/v3/ticker/price") {
      if (url.searchParams.get("symbol") === "BTCUSDT") return send(200, { symbol: "BTCUSDT", price: "97008.42000000" });
      if (url.searchParams.get("symbol") === "DOGEUSDT") return send(429, { code: -1003, msg: "Too many requests" });
      return send(400, { code: -1121, msg: "Invalid symbol." });
    }
    send(404, "<html>not an API</html>");
};

describe("oracle.price-feed: one pair on one venue, read from the venue's public API and cited", function () {
  this.timeout(60_000);
  const up = upstreamForSuite(venues, (base) => ({ ...venueEnv(base), PRICE_CACHE_SECONDS: "60" }));
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("reads each venue in its own format and cites the read; a repeat within the cache window is served from the cache", async () => {
    const before = await up.balance();
    const cb = await pay({ pair: "btc-usd", venue: "coinbase" });
    expect(cb.body.deliverable).to.include({ pair: "BTC-USD", venue: "coinbase", venue_symbol: "BTC-USD", price: "97011.50", bid: "97010.01", ask: "97012.35" });
    expect(cb.body.deliverable.source).to.include({ venue: "coinbase", venue_time: "2026-11-22T01:00:00.000Z", cached: false });
    expect(cb.body.deliverable.source.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/ticker$/);
    const kr = await pay({ pair: "BTC/USD", venue: "kraken" });
    expect(kr.body.deliverable).to.include({ venue: "kraken", venue_symbol: "XXBTZUSD", price: "97015.00000", bid: "97014.90000", ask: "97015.10000" });
    const bn = await pay({ pair: "BTC-USD", venue: "binance" });
    expect(bn.body.deliverable).to.include({ venue: "binance", venue_symbol: "BTCUSDT", price: "97008.42000000" });
    expect(bn.body.deliverable.note).to.contain("USDT");

    const readsBefore = reads.length;
    const again = await pay({ pair: "BTC-USD" }); // coinbase is the default venue
    expect(again.body.deliverable.source.cached).to.equal(true);
    expect(again.body.deliverable.price).to.equal("97011.50");
    expect(reads.length).to.equal(readsBefore);
    expect(await up.balance()).to.equal(before - 4n * 20_000n);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("charges nothing when the venue refuses, rate-limits or answers garbage", async () => {
    // service_failed: nothing charged
    await expectFailuresUncharged(up, SKU, [
      [{ pair: "FOO-USD", venue: "coinbase" }, 503],
      [{ pair: "ETH-USD", venue: "coinbase" }, 503],
      [{ pair: "FOO-USD", venue: "kraken" }, 503],
      [{ pair: "FOO-USD", venue: "binance" }, 503],
      [{ pair: "DOGE-USD", venue: "binance" }, 503],
    ]);
  });

  it("refuses bad input before any challenge", async () => {
    for (const body of [{}, { pair: "BTCUSD" }, { pair: "BTC-USD", venue: "ftx" }, { pair: 7 }]) {
      const res = await up.unpaid(SKU, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.challenged).to.equal(false);
    }
  });
});

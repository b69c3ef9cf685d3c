import { expect } from "chai";
import { UpstreamError, VenueClient, type Venue } from "../../../src/market-data/venues.js";
import { candlesFromCloses, VenueEmulator, type Fault, type ReadKind } from "../../fixtures/venue-emulator.js";

// The three venue adapters against a loopback server answering in each venue's documented format:
// order-book tops, candles (closed ones only, oldest first), and every failure a venue can answer with.

const VENUES: Venue[] = ["coinbase", "kraken", "binance"];
const HOUR = 3600;

describe("market-data venue adapters (Coinbase Exchange, Kraken, Binance public REST)", () => {
  const closes = Array.from({ length: 30 }, (_, i) => 97_000 + 25 * i + (i % 3) * 7.5);
  const series = candlesFromCloses(closes, HOUR);
  const emulator = new VenueEmulator({
    tickers: { coinbase: { "BTC-USD": "97011.50" }, kraken: { "BTC-USD": "97015.00000" }, binance: { "BTC-USD": "97008.42000000" } },
    books: {
      coinbase: { "BTC-USD": { bid: "97010.01", bidSize: "0.51", ask: "97012.35", askSize: "0.2" } },
      kraken: { "BTC-USD": { bid: "97014.90000", bidSize: "2.000", ask: "97015.10000", askSize: "1.000" } },
      binance: { "BTC-USD": { bid: "97008.40000000", bidSize: "1.20000000", ask: "97008.42000000", askSize: "0.03000000" } },
    },
    candles: { "BTC-USD": { [HOUR]: series } },
  });
  let client: VenueClient;
  before(async () => {
    const base = await emulator.listen();
    const port = new URL(base).port;
    client = new VenueClient({ coinbase: `${base}/coinbase`, kraken: `${base}/kraken`, binance: `${base}/binance` }, { allow: [`127.0.0.1:${port}`], allowHttp: true });
  });
  after(() => emulator.close());
  afterEach(() => emulator.faults.clear());

  it("reads each venue's order-book top from its documented endpoint", async () => {
    const cb = await client.bookTop("coinbase", "BTC", "USD");
    expect(cb).to.deep.include({ venue: "coinbase", venueSymbol: "BTC-USD", bid: { price: "97010.01", size: "0.51" }, ask: { price: "97012.35", size: "0.2" }, venueTime: "2026-11-22T01:00:00.123Z" });
    expect(cb.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/book\?level=1$/);
    const kr = await client.bookTop("kraken", "BTC", "USD");
    expect(kr).to.deep.include({ venueSymbol: "XXBTZUSD", bid: { price: "97014.90000", size: "2.000" }, ask: { price: "97015.10000", size: "1.000" }, venueTime: new Date(1795315201 * 1000).toISOString() });
    expect(kr.endpoint).to.match(/\/kraken\/0\/public\/Depth\?pair=XBTUSD&count=1$/);
    const bn = await client.bookTop("binance", "BTC", "USD");
    expect(bn).to.deep.include({ venueSymbol: "BTCUSDT", bid: { price: "97008.40000000", size: "1.20000000" }, ask: { price: "97008.42000000", size: "0.03000000" } });
    expect(bn.endpoint).to.match(/\/binance\/api\/v3\/depth\?symbol=BTCUSDT&limit=5$/);
  });

  it("reads candles in each venue's format: closed candles only, oldest first, the same series from all three", async () => {
    for (const venue of VENUES) {
      const s = await client.candles(venue, "BTC", "USD", "1h", 10);
      expect(s.candles, venue).to.have.length(10);
      expect(s.candles.map((c) => c.time), venue).to.deep.equal(series.slice(-10).map((c) => c.time));
      expect(s.candles.map((c) => Number(c.close)), venue).to.deep.equal(closes.slice(-10).map((c) => Number(c.toFixed(2))));
      expect(s.candles.map((c) => [Number(c.open), Number(c.high), Number(c.low)]), venue).to.deep.equal(series.slice(-10).map((c) => [Number(c.open), Number(c.high), Number(c.low)]));
      expect(s.interval).to.equal("1h");
    }
    // Kraken and Binance send strings (kept as sent); Coinbase sends JSON numbers (written back as plain decimals).
    expect((await client.candles("kraken", "BTC", "USD", "1h", 3)).candles[0]!.close).to.equal(series.at(-3)!.close);
    expect((await client.candles("binance", "BTC", "USD", "1h", 3)).candles[0]!.volume).to.equal(series.at(-3)!.volume);
    const reads = emulator.reads.join("\n");
    expect(reads).to.contain("/coinbase/products/BTC-USD/candles?granularity=3600");
    expect(reads).to.contain("/kraken/0/public/OHLC?pair=XBTUSD&interval=60");
    expect(reads).to.contain("/binance/api/v3/klines?symbol=BTCUSDT&interval=1h&limit=11");
    // More than the venue has: what it has (all closed ones).
    expect((await client.candles("coinbase", "BTC", "USD", "1h", 200)).candles).to.have.length(30);
  });

  const cases: [Venue, ReadKind, Fault, RegExp][] = [
    ["coinbase", "book", "rate_limit", /^coinbase: rate limited \(HTTP 429\)/],
    ["coinbase", "candles", "rate_limit", /^coinbase: rate limited \(HTTP 429\)/],
    ["kraken", "book", "rate_limit", /^kraken: rate limited: EAPI:Rate limit exceeded/],
    ["kraken", "candles", "rate_limit", /^kraken: rate limited: EAPI:Rate limit exceeded/],
    ["binance", "book", "rate_limit", /^binance: rate limited \(HTTP 429, retry after 7 s\)/],
    ["binance", "candles", "ban", /^binance: rate limited \(HTTP 418, retry after 600 s\)/],
    ["coinbase", "book", "malformed", /^coinbase: malformed order book/],
    ["coinbase", "candles", "malformed", /^coinbase: malformed candles/],
    ["kraken", "book", "malformed", /^kraken: malformed order book/],
    ["kraken", "candles", "malformed", /^kraken: malformed OHLC/],
    ["binance", "book", "malformed", /^binance: malformed order book/],
    ["binance", "candles", "malformed", /^binance: malformed klines/],
    ["coinbase", "candles", "bad_candle", /^coinbase: malformed candle at \d+/],
    ["kraken", "candles", "bad_candle", /^kraken: malformed candle at \d+/],
    ["binance", "candles", "bad_candle", /^binance: malformed candle at \d+/],
    ["coinbase", "book", "not_json", /^coinbase: answered HTTP 200 with a body that is not JSON/],
    ["kraken", "candles", "server_error", /^kraken: answered HTTP 520 with a body that is not JSON/],
    ["binance", "book", "server_error", /^binance: answered HTTP 502 with a body that is not JSON/],
    ["coinbase", "book", "server_error", /^coinbase: HTTP 503 on order book: service unavailable/],
    ["coinbase", "book", "unknown_pair", /^coinbase: HTTP 404 on order book: NotFound/],
    ["kraken", "book", "unknown_pair", /^kraken: EQuery:Unknown asset pair/],
    ["binance", "candles", "unknown_pair", /^binance: Invalid symbol\. \(code -1121, HTTP 400\) on klines/],
    ["coinbase", "book", "empty_book", /^coinbase: empty order book \(no bid\)/],
    ["kraken", "book", "empty_book", /^kraken: empty order book \(no bid\)/],
    ["binance", "book", "empty_book", /^binance: empty order book \(no bid\)/],
  ];
  for (const [venue, kind, fault, message] of cases) {
    it(`${venue} ${kind}: ${fault} becomes a clear UpstreamError`, async () => {
      emulator.fault(venue, kind, "BTC-USD", fault);
      const read = kind === "book" ? client.bookTop(venue, "BTC", "USD") : client.candles(venue, "BTC", "USD", "1h", 5);
      const err = await read.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(UpstreamError);
      expect((err as UpstreamError).venue).to.equal(venue);
      expect((err as Error).message).to.match(message);
    });
  }
});

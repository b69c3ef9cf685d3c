import { z } from "zod";
import type { Interval } from "./market-types.js";
import { BookSide, bestLevel, checkedCandle, type VenueAdapter } from "./venue-adapter.js";
import { Decimal, UpstreamError, type VenueResponse } from "./venue-http.js";

// Binance spot public REST (api.binance.com); symbols like BTCUSDT (USD pairs are quoted in USDT):
//   GET /api/v3/ticker/price?symbol=S          {symbol, price}
//   GET /api/v3/depth?symbol=S&limit=5         {lastUpdateId, bids: [[price, qty]], asks: [[price, qty]]}
//   GET /api/v3/klines?symbol=S&interval=1h&limit=N
//       [[openTime ms, open, high, low, close, volume, closeTime ms, quoteVolume, trades, ...]] oldest first,
//       at most 1000, the current (open) kline included
// Errors: a non-200 status with {code, msg}; 429 when over the request weight, 418 once IP-banned.

const Price = z.object({ symbol: z.string(), price: Decimal });
const Book = z.object({ lastUpdateId: z.number().int(), bids: BookSide, asks: BookSide });
const Klines = z.array(z.tuple([z.number().int(), Decimal, Decimal, Decimal, Decimal, Decimal, z.number().int()], z.unknown()));
const BinanceError = z.object({ code: z.number(), msg: z.string() });

function ok(r: VenueResponse, what: string): void {
  if (r.status === 200) return;
  const e = BinanceError.safeParse(r.body);
  throw new UpstreamError("binance", e.success ? `${e.data.msg} (code ${e.data.code}, HTTP ${r.status}) on ${what}` : `HTTP ${r.status} on ${what}`);
}

export const binanceVenue: VenueAdapter = {
  venue: "binance",
  maxCandles: 1000,
  symbol: (base, quote) => `${base}${quote === "USD" ? "USDT" : quote}`,
  tickerPath: (symbol) => `/api/v3/ticker/price?symbol=${symbol}`,
  parseTicker(r) {
    ok(r, "price ticker");
    const t = Price.safeParse(r.body);
    if (!t.success) throw new UpstreamError("binance", "malformed price ticker");
    return { venueSymbol: t.data.symbol, price: t.data.price, bid: null, ask: null, venueTime: null };
  },
  bookPath: (symbol) => `/api/v3/depth?symbol=${symbol}&limit=5`,
  parseBook(r, symbol) {
    ok(r, "order book");
    const b = Book.safeParse(r.body);
    if (!b.success) throw new UpstreamError("binance", "malformed order book");
    return { venueSymbol: symbol, bid: bestLevel("binance", b.data.bids, "bid"), ask: bestLevel("binance", b.data.asks, "ask"), venueTime: null };
  },
  candlesPath: (symbol, interval: Interval, limit) => `/api/v3/klines?symbol=${symbol}&interval=${interval}&limit=${limit}`,
  parseCandles(r, symbol) {
    ok(r, "klines");
    const k = Klines.safeParse(r.body);
    if (!k.success) throw new UpstreamError("binance", "malformed klines");
    const candles = k.data.map(([openMs, open, high, low, close, volume]) => checkedCandle("binance", { time: Math.floor(openMs / 1000), open, high, low, close, volume }));
    return { venueSymbol: symbol, candles };
  },
};

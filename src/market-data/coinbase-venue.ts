import { z } from "zod";
import type { Interval } from "./market-types.js";
import { INTERVAL_SECONDS } from "./market-types.js";
import { BookSide, bestLevel, checkedCandle, type VenueAdapter } from "./venue-adapter.js";
import { Decimal, plainDecimal, UpstreamError, type VenueResponse } from "./venue-http.js";

// Coinbase Exchange public REST (api.exchange.coinbase.com), product ids like BTC-USD:
//   GET /products/{id}/ticker                 {price, bid, ask, time, ...}
//   GET /products/{id}/book?level=1           {bids: [[price, size, num_orders]], asks: [...], sequence, time}
//   GET /products/{id}/candles?granularity=S  [[time, low, high, open, close, volume], ...] newest first,
//                                             JSON numbers, at most 300, the current (open) candle included
// Errors: a non-200 status with {message}.

const Ticker = z.object({ price: Decimal, bid: Decimal.optional(), ask: Decimal.optional(), time: z.string().optional() });
const Book = z.object({ bids: BookSide, asks: BookSide, time: z.string().optional() });
const Price = z.number().finite().nonnegative();
const Candles = z.array(z.tuple([z.number().int(), Price, Price, Price, Price, Price], z.unknown()));

function ok(r: VenueResponse, what: string): void {
  if (r.status !== 200) {
    const message = (r.body as { message?: unknown } | null)?.message;
    throw new UpstreamError("coinbase", `HTTP ${r.status} on ${what}${typeof message === "string" ? `: ${message}` : ""}`);
  }
}

export const coinbaseVenue: VenueAdapter = {
  venue: "coinbase",
  maxCandles: 300,
  symbol: (base, quote) => `${base}-${quote}`,
  tickerPath: (symbol) => `/products/${symbol}/ticker`,
  parseTicker(r, symbol) {
    ok(r, "ticker");
    const t = Ticker.safeParse(r.body);
    if (!t.success) throw new UpstreamError("coinbase", "malformed ticker");
    return { venueSymbol: symbol, price: t.data.price, bid: t.data.bid ?? null, ask: t.data.ask ?? null, venueTime: t.data.time ?? null };
  },
  bookPath: (symbol) => `/products/${symbol}/book?level=1`,
  parseBook(r, symbol) {
    ok(r, "order book");
    const b = Book.safeParse(r.body);
    if (!b.success) throw new UpstreamError("coinbase", "malformed order book");
    return { venueSymbol: symbol, bid: bestLevel("coinbase", b.data.bids, "bid"), ask: bestLevel("coinbase", b.data.asks, "ask"), venueTime: b.data.time ?? null };
  },
  candlesPath: (symbol, interval: Interval) => `/products/${symbol}/candles?granularity=${INTERVAL_SECONDS[interval]}`,
  parseCandles(r, symbol) {
    ok(r, "candles");
    const c = Candles.safeParse(r.body);
    if (!c.success) throw new UpstreamError("coinbase", "malformed candles");
    const candles = c.data.map(([time, low, high, open, close, volume]) =>
      checkedCandle("coinbase", { time, open: plainDecimal(open), high: plainDecimal(high), low: plainDecimal(low), close: plainDecimal(close), volume: plainDecimal(volume) }),
    );
    return { venueSymbol: symbol, candles };
  },
};

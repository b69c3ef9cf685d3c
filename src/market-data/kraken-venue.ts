import { z } from "zod";
import { INTERVAL_SECONDS, type Interval } from "./market-types.js";
import { BookSide, bestLevel, checkedCandle, type VenueAdapter } from "./venue-adapter.js";
import { Decimal, UpstreamError, type VenueResponse } from "./venue-http.js";

// Kraken public REST (api.kraken.com); pairs like XBTUSD, answered under Kraken's own key (XXBTZUSD):
//   GET /0/public/Ticker?pair=P            {error: [], result: {<pair>: {a, b, c, ...}}}
//   GET /0/public/Depth?pair=P&count=1     {error: [], result: {<pair>: {asks: [[price, volume, timestamp]], bids: [...]}}}
//   GET /0/public/OHLC?pair=P&interval=MIN {error: [], result: {<pair>: [[time, open, high, low, close, vwap, volume, count]], last}}
//                                          oldest first, at most 720, the last entry is the current (open) candle
// Errors come as HTTP 200 with a non-empty `error` array ("EQuery:Unknown asset pair", "EAPI:Rate limit exceeded"...).

const Envelope = z.object({ error: z.array(z.string()), result: z.record(z.string(), z.unknown()).optional() });
const Ticker = z.object({ a: z.array(z.string()).min(1), b: z.array(z.string()).min(1), c: z.array(z.string()).min(1) });
const Book = z.object({ asks: BookSide, bids: BookSide });
const Ohlc = z.array(z.tuple([z.number().int(), Decimal, Decimal, Decimal, Decimal, Decimal, Decimal], z.unknown()));

/** The `result` object of a Kraken answer, after its error array. */
function resultOf(r: VenueResponse, what: string): Record<string, unknown> {
  const e = Envelope.safeParse(r.body);
  if (!e.success) throw new UpstreamError("kraken", `malformed ${what} (HTTP ${r.status})`);
  if (e.data.error.length) {
    const rateLimited = e.data.error.some((m) => /rate limit|too many requests/i.test(m));
    throw new UpstreamError("kraken", `${rateLimited ? "rate limited: " : ""}${e.data.error.join("; ")}`);
  }
  if (!e.data.result) throw new UpstreamError("kraken", `no result in the ${what} answer`);
  return e.data.result;
}

/** The one pair entry of a result (Kraken keys it by its own pair name; OHLC adds `last`). */
function pairEntry(result: Record<string, unknown>, what: string): [string, unknown] {
  const entry = Object.entries(result).find(([k]) => k !== "last");
  if (!entry) throw new UpstreamError("kraken", `no pair in the ${what} result`);
  return entry;
}

export const krakenVenue: VenueAdapter = {
  venue: "kraken",
  maxCandles: 720,
  symbol: (base, quote) => `${base === "BTC" ? "XBT" : base}${quote}`,
  tickerPath: (symbol) => `/0/public/Ticker?pair=${symbol}`,
  parseTicker(r) {
    const [key, raw] = pairEntry(resultOf(r, "ticker"), "ticker");
    const t = Ticker.safeParse(raw);
    if (!t.success || !Decimal.safeParse(t.data.c[0]).success) throw new UpstreamError("kraken", "no ticker in the result");
    return { venueSymbol: key, price: t.data.c[0]!, bid: t.data.b[0] ?? null, ask: t.data.a[0] ?? null, venueTime: null };
  },
  bookPath: (symbol) => `/0/public/Depth?pair=${symbol}&count=1`,
  parseBook(r) {
    const [key, raw] = pairEntry(resultOf(r, "order book"), "order book");
    const b = Book.safeParse(raw);
    if (!b.success) throw new UpstreamError("kraken", "malformed order book");
    const stamps = [b.data.asks[0]?.[2], b.data.bids[0]?.[2]].filter((t): t is number => typeof t === "number");
    const venueTime = stamps.length ? new Date(Math.max(...stamps) * 1000).toISOString() : null;
    return { venueSymbol: key, bid: bestLevel("kraken", b.data.bids, "bid"), ask: bestLevel("kraken", b.data.asks, "ask"), venueTime };
  },
  candlesPath: (symbol, interval: Interval) => `/0/public/OHLC?pair=${symbol}&interval=${INTERVAL_SECONDS[interval] / 60}`,
  parseCandles(r) {
    const [key, raw] = pairEntry(resultOf(r, "OHLC"), "OHLC");
    const c = Ohlc.safeParse(raw);
    if (!c.success) throw new UpstreamError("kraken", "malformed OHLC");
    const candles = c.data.map(([time, open, high, low, close, , volume]) => checkedCandle("kraken", { time, open, high, low, close, volume }));
    return { venueSymbol: key, candles };
  },
};

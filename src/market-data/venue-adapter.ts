import { z } from "zod";
import type { BookLevel, Candle, Interval, Quote } from "./market-types.js";
import { Decimal, UpstreamError, type Venue, type VenueResponse } from "./venue-http.js";

// One venue's public REST API: where each read lives and how its documented payload parses. The
// adapters never fetch; VenueClient does, so every read goes through the same safe GET.

export interface ParsedBook {
  venueSymbol: string;
  bid: BookLevel;
  ask: BookLevel;
  venueTime: string | null;
}

export interface VenueAdapter {
  readonly venue: Venue;
  /** Most candles one request returns. */
  readonly maxCandles: number;
  symbol(base: string, quote: string): string;
  tickerPath(symbol: string): string;
  parseTicker(r: VenueResponse, symbol: string): Omit<Quote, "venue" | "endpoint">;
  bookPath(symbol: string): string;
  parseBook(r: VenueResponse, symbol: string): ParsedBook;
  candlesPath(symbol: string, interval: Interval, limit: number): string;
  /** The candles in the payload, in any order; VenueClient sorts and keeps the closed ones. */
  parseCandles(r: VenueResponse, symbol: string): { venueSymbol: string; candles: Candle[] };
}

/** A book side as venues write it: [price, size, ...venue extras]. */
export const BookSide = z.array(z.tuple([Decimal, Decimal], z.unknown()));

/** The best level of a side already sorted best first by the venue; an empty side is an error. */
export function bestLevel(venue: Venue, side: z.infer<typeof BookSide>, name: "bid" | "ask"): BookLevel {
  const top = side[0];
  if (!top) throw new UpstreamError(venue, `empty order book (no ${name})`);
  return { price: top[0], size: top[1] };
}

/** Rejects a candle whose low/high do not bound its open and close (a payload in the wrong column order). */
export function checkedCandle(venue: Venue, c: Candle): Candle {
  const [o, h, l, cl] = [Number(c.open), Number(c.high), Number(c.low), Number(c.close)];
  if (!Number.isInteger(c.time) || c.time <= 0 || !(l <= Math.min(o, cl) && h >= Math.max(o, cl))) {
    throw new UpstreamError(venue, `malformed candle at ${c.time}: low/high do not bound open/close`);
  }
  return c;
}

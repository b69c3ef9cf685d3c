import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { binanceVenue } from "./binance-venue.js";
import { coinbaseVenue } from "./coinbase-venue.js";
import { krakenVenue } from "./kraken-venue.js";
import { INTERVAL_SECONDS, type BookTop, type CandleSeries, type Interval, type Quote } from "./market-types.js";
import type { VenueAdapter } from "./venue-adapter.js";
import { getVenueJson, type Venue } from "./venue-http.js";

// Public exchange REST clients: Coinbase Exchange, Kraken and Binance, each read in its own documented
// format by its adapter (coinbase-venue.ts, kraken-venue.ts, binance-venue.ts): ticker, order book top
// and candles. Prices stay decimal strings as the venues send them (never floats). Every failure
// (refusal, rate limiting, a payload not in the documented format) is an UpstreamError naming the venue.

export { VENUES, VENUE_NAMES, UpstreamError, type Venue } from "./venue-http.js";
export type { BookLevel, BookTop, Candle, CandleSeries, Interval, Quote } from "./market-types.js";

const ADAPTERS: Record<Venue, VenueAdapter> = { coinbase: coinbaseVenue, kraken: krakenVenue, binance: binanceVenue };

const QUOTE_LIMITS = { timeoutMs: 5_000, maxBytes: 256 * 1024 };
const CANDLE_LIMITS = { timeoutMs: 8_000, maxBytes: 1024 * 1024 };

export class VenueClient {
  constructor(
    private readonly baseUrls: Record<Venue, string>,
    private readonly policy: SafeFetchPolicy,
    private readonly timeoutMs = QUOTE_LIMITS.timeoutMs,
  ) {}

  /** The configured base URL of a venue (its origin on a real deployment), for circuit breakers. */
  baseUrl(venue: Venue): string {
    return this.baseUrls[venue].replace(/\/+$/, "");
  }

  /** The venue's symbol for a pair (BTC-USD on Coinbase, XBTUSD on Kraken, BTCUSDT on Binance). */
  symbol(venue: Venue, base: string, quote: string): string {
    return ADAPTERS[venue].symbol(base, quote);
  }

  async quote(venue: Venue, base: string, quote: string): Promise<Quote> {
    const a = ADAPTERS[venue];
    const symbol = a.symbol(base, quote);
    const r = await getVenueJson(venue, this.baseUrls[venue], a.tickerPath(symbol), this.policy, { ...QUOTE_LIMITS, timeoutMs: this.timeoutMs });
    return { venue, endpoint: r.endpoint, ...a.parseTicker(r, symbol) };
  }

  /** Best bid and best ask of the venue's order book. */
  async bookTop(venue: Venue, base: string, quote: string): Promise<BookTop> {
    const a = ADAPTERS[venue];
    const symbol = a.symbol(base, quote);
    const r = await getVenueJson(venue, this.baseUrls[venue], a.bookPath(symbol), this.policy, { ...QUOTE_LIMITS, timeoutMs: this.timeoutMs });
    return { venue, endpoint: r.endpoint, fetchedAt: r.fetchedAt, ...a.parseBook(r, symbol) };
  }

  /**
   * The latest `limit` closed candles, oldest first. Venues include the candle still in progress; it is
   * dropped (its close is not a close yet), so statistics only see finished periods. A venue with less
   * history returns fewer.
   */
  async candles(venue: Venue, base: string, quote: string, interval: Interval, limit: number, now = Date.now()): Promise<CandleSeries> {
    const a = ADAPTERS[venue];
    const symbol = a.symbol(base, quote);
    const requested = Math.min(limit + 1, a.maxCandles);
    const r = await getVenueJson(venue, this.baseUrls[venue], a.candlesPath(symbol, interval, requested), this.policy, CANDLE_LIMITS);
    const parsed = a.parseCandles(r, symbol);
    const step = INTERVAL_SECONDS[interval];
    const byTime = new Map(parsed.candles.map((c) => [c.time, c]));
    const closed = [...byTime.values()].filter((c) => (c.time + step) * 1000 <= now).sort((x, y) => x.time - y.time);
    return { venue, venueSymbol: parsed.venueSymbol, interval, candles: closed.slice(-limit), endpoint: r.endpoint, fetchedAt: r.fetchedAt };
  }
}

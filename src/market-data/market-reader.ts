import type { BookTop, CandleSeries, Interval, Quote } from "./market-types.js";
import type { Venue } from "./venue-http.js";
import type { VenueClient } from "./venues.js";

// The venue reads of the market engines behind short caches, so a burst of buyers does not hammer the
// venues: tickers and order-book tops for the price cache time (PRICE_CACHE_SECONDS), closed candles for
// CANDLE_CACHE_MS (a closed candle never changes; a new one appears at most once per interval). A read
// shared with a request already in flight counts as cached. Each read keeps the time it was made, so
// provenance states when the data was fetched and whether this answer reused it.

export const CANDLE_CACHE_MS = 30_000;
const MAX_ENTRIES = 1_000;

export interface Read<T> {
  value: T;
  fetchedAt: Date;
  cached: boolean;
}

class TtlCache {
  private readonly entries = new Map<string, { at: number; read: Promise<{ value: unknown; fetchedAt: Date }> }>();

  constructor(private readonly ttlMs: number) {}

  async get<T>(key: string, load: () => Promise<T>, fetchedAtOf: (v: T) => Date): Promise<Read<T>> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) {
      const r = await hit.read;
      return { value: r.value as T, fetchedAt: r.fetchedAt, cached: true };
    }
    const read = load().then((value) => ({ value, fetchedAt: fetchedAtOf(value) }));
    if (this.ttlMs > 0) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!); // bounded: oldest out
      this.entries.set(key, { at: now, read });
      read.catch(() => this.entries.delete(key)); // failures are never cached
    }
    const r = await read;
    return { value: r.value, fetchedAt: r.fetchedAt, cached: false };
  }
}

export class MarketReader {
  private readonly quotes: TtlCache;
  private readonly books: TtlCache;
  private readonly candleCache: TtlCache;

  constructor(
    readonly venues: VenueClient,
    priceCacheMs: number,
    candleCacheMs = CANDLE_CACHE_MS,
  ) {
    this.quotes = new TtlCache(priceCacheMs);
    this.books = new TtlCache(priceCacheMs);
    this.candleCache = new TtlCache(candleCacheMs);
  }

  quote(venue: Venue, base: string, quote: string): Promise<Read<Quote & { fetchedAt: Date }>> {
    return this.quotes.get(
      `${venue}|${base}-${quote}`,
      async () => ({ ...(await this.venues.quote(venue, base, quote)), fetchedAt: new Date() }),
      (q) => q.fetchedAt,
    );
  }

  bookTop(venue: Venue, base: string, quote: string): Promise<Read<BookTop>> {
    return this.books.get(`${venue}|${base}-${quote}`, () => this.venues.bookTop(venue, base, quote), (b) => b.fetchedAt);
  }

  candles(venue: Venue, base: string, quote: string, interval: Interval, limit: number): Promise<Read<CandleSeries>> {
    return this.candleCache.get(`${venue}|${base}-${quote}|${interval}|${limit}`, () => this.venues.candles(venue, base, quote, interval, limit), (s) => s.fetchedAt);
  }
}

import { z } from "zod";
import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// Public exchange REST adapters, each parsing the venue's documented ticker format:
//   Coinbase Exchange  GET /products/{BASE-QUOTE}/ticker             {price, bid, ask, time, ...}
//   Kraken             GET /0/public/Ticker?pair={BASEQUOTE}         {error: [], result: {<pair>: {a, b, c, ...}}}
//   Binance            GET /api/v3/ticker/price?symbol={BASEQUOTE}  {symbol, price}
// Prices stay decimal strings as the venues send them (never floats).

export const VENUES = ["coinbase", "kraken", "binance"] as const;
export type Venue = (typeof VENUES)[number];

export interface Quote {
  venue: Venue;
  /** The venue's own symbol for the pair (Kraken says XBT, Binance quotes USD pairs in USDT). */
  venueSymbol: string;
  price: string;
  bid: string | null;
  ask: string | null;
  endpoint: string;
  /** The venue's own timestamp of the quote, when it gives one. */
  venueTime: string | null;
}

export class UpstreamError extends Error {
  constructor(readonly venue: Venue, message: string) {
    super(`${venue}: ${message}`);
  }
}

const Decimal = z.string().regex(/^\d+(\.\d+)?$/);
const CoinbaseTicker = z.object({ price: Decimal, bid: Decimal.optional(), ask: Decimal.optional(), time: z.string().optional() });
const KrakenTicker = z.object({ error: z.array(z.string()), result: z.record(z.string(), z.object({ a: z.array(z.string()).min(1), b: z.array(z.string()).min(1), c: z.array(z.string()).min(1) })).optional() });
const BinancePrice = z.object({ symbol: z.string(), price: Decimal });
const BinanceError = z.object({ code: z.number(), msg: z.string() });

export class VenueClient {
  constructor(
    private readonly baseUrls: Record<Venue, string>,
    private readonly policy: SafeFetchPolicy,
    private readonly timeoutMs = 5_000,
  ) {}

  private async getJson(venue: Venue, path: string): Promise<{ endpoint: string; status: number; body: unknown }> {
    const endpoint = `${this.baseUrls[venue].replace(/\/+$/, "")}${path}`;
    const res = await safeRequest(endpoint, { method: "GET", timeoutMs: this.timeoutMs, maxBytes: 256 * 1024, headers: { accept: "application/json", "user-agent": "svc-market-data/1.0" } }, this.policy);
    if (res.status === 429 || res.status === 418) throw new UpstreamError(venue, `rate limited (HTTP ${res.status})`);
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      throw new UpstreamError(venue, `answered HTTP ${res.status} with a body that is not JSON`);
    }
    return { endpoint, status: res.status, body };
  }

  async quote(venue: Venue, base: string, quote: string): Promise<Quote> {
    if (venue === "coinbase") {
      const symbol = `${base}-${quote}`;
      const r = await this.getJson(venue, `/products/${symbol}/ticker`);
      if (r.status !== 200) throw new UpstreamError(venue, `HTTP ${r.status}: ${String((r.body as { message?: string }).message ?? "")}`);
      const t = CoinbaseTicker.safeParse(r.body);
      if (!t.success) throw new UpstreamError(venue, "malformed ticker");
      return { venue, venueSymbol: symbol, price: t.data.price, bid: t.data.bid ?? null, ask: t.data.ask ?? null, endpoint: r.endpoint, venueTime: t.data.time ?? null };
    }
    if (venue === "kraken") {
      const symbol = `${base === "BTC" ? "XBT" : base}${quote}`;
      const r = await this.getJson(venue, `/0/public/Ticker?pair=${symbol}`);
      const t = KrakenTicker.safeParse(r.body);
      if (!t.success) throw new UpstreamError(venue, `malformed ticker (HTTP ${r.status})`);
      if (t.data.error.length) throw new UpstreamError(venue, t.data.error.join("; "));
      const [key, v] = Object.entries(t.data.result ?? {})[0] ?? [];
      if (!key || !v || !Decimal.safeParse(v.c[0]).success) throw new UpstreamError(venue, "no ticker in the result");
      return { venue, venueSymbol: key, price: v.c[0]!, bid: v.b[0] ?? null, ask: v.a[0] ?? null, endpoint: r.endpoint, venueTime: null };
    }
    const symbol = `${base}${quote === "USD" ? "USDT" : quote}`;
    const r = await this.getJson(venue, `/api/v3/ticker/price?symbol=${symbol}`);
    if (r.status !== 200) {
      const e = BinanceError.safeParse(r.body);
      throw new UpstreamError(venue, e.success ? `${e.data.msg} (code ${e.data.code})` : `HTTP ${r.status}`);
    }
    const t = BinancePrice.safeParse(r.body);
    if (!t.success) throw new UpstreamError(venue, "malformed price ticker");
    return { venue, venueSymbol: t.data.symbol, price: t.data.price, bid: null, ask: null, endpoint: r.endpoint, venueTime: null };
  }
}

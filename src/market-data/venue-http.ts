import { z } from "zod";
import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// What the three venue adapters share: the venue names, the error every venue failure becomes, the
// decimal-string schema of venue prices, and one GET that turns rate limiting and non-JSON bodies into
// clear errors before any adapter parses a payload.

export const VENUES = ["coinbase", "kraken", "binance"] as const;
export type Venue = (typeof VENUES)[number];

export const VENUE_NAMES: Record<Venue, string> = {
  coinbase: "Coinbase Exchange",
  kraken: "Kraken",
  binance: "Binance",
};

/** A venue that refused, rate-limited, failed or answered something that is not its documented format. */
export class UpstreamError extends Error {
  constructor(readonly venue: Venue, message: string) {
    super(`${venue}: ${message}`);
  }
}

/** A venue price or size as the venue writes it (never a float). */
export const Decimal = z.string().regex(/^\d+(\.\d+)?$/);

export interface VenueResponse {
  /** The URL read, cited as the source. */
  endpoint: string;
  status: number;
  body: unknown;
  fetchedAt: Date;
}

export interface VenueHttpOptions {
  timeoutMs: number;
  maxBytes: number;
}

/** GET a venue path; throws UpstreamError on rate limiting (429, Binance's 418 ban) and on non-JSON bodies. */
export async function getVenueJson(venue: Venue, baseUrl: string, path: string, policy: SafeFetchPolicy, o: VenueHttpOptions): Promise<VenueResponse> {
  const endpoint = `${baseUrl.replace(/\/+$/, "")}${path}`;
  let res;
  try {
    res = await safeRequest(endpoint, { method: "GET", timeoutMs: o.timeoutMs, maxBytes: o.maxBytes, headers: { accept: "application/json", "user-agent": "svc-market-data/1.0" } }, policy);
  } catch (err) {
    throw new UpstreamError(venue, `request failed: ${(err as Error).message}`);
  }
  const fetchedAt = new Date();
  if (res.status === 429 || res.status === 418) {
    const retry = res.headers["retry-after"];
    throw new UpstreamError(venue, `rate limited (HTTP ${res.status}${retry ? `, retry after ${String(retry)} s` : ""})`);
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new UpstreamError(venue, `answered HTTP ${res.status} with a body that is not JSON`);
  }
  return { endpoint, status: res.status, body, fetchedAt };
}

/** A JS number as a plain decimal string (Coinbase candles are JSON numbers; never exponent notation). */
export function plainDecimal(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/\.?0+$/, "");
}

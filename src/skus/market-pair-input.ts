import { z } from "zod";
import type { Read } from "../market-data/market-reader.js";
import { VENUE_NAMES, VENUES, type Venue } from "../market-data/venues.js";

// What the market engines share: how a buyer names the pair (`pair` like BTC-USD or BTC/USD, else
// `ticker` with `quote` (USD by default), else the first upper-case pair written in `task`), and the
// citation of one venue read.

const PAIR = /^([A-Z0-9]{2,10})[-/]([A-Z0-9]{2,10})$/;
const PAIR_IN_TEXT = /\b([A-Z][A-Z0-9]{1,9})[-/]([A-Z][A-Z0-9]{1,9})\b/;
const ASSET = /^[A-Z0-9]{2,10}$/;

export const pairFields = {
  pair: z.string().trim().toUpperCase().regex(PAIR, "pair like BTC-USD").describe("BASE-QUOTE or BASE/QUOTE, e.g. BTC-USD").optional(),
  ticker: z.string().trim().toUpperCase().regex(ASSET, "a ticker like BTC").describe("base asset, quoted in `quote`; used when `pair` is absent").optional(),
  quote: z.string().trim().toUpperCase().regex(ASSET, "a quote asset like USD").default("USD"),
  task: z.string().max(4096).describe("free text; its first upper-case pair (BTC-USD) is used when neither pair nor ticker is given").optional(),
};

export interface PairSpec {
  pair?: string | undefined;
  ticker?: string | undefined;
  quote: string;
  task?: string | undefined;
}

export interface Pair {
  base: string;
  quote: string;
  /** BASE-QUOTE. */
  id: string;
}

export function pairOf(v: PairSpec): Pair | undefined {
  const m = v.pair ? PAIR.exec(v.pair) : undefined;
  const [base, quote] = m ? [m[1]!, m[2]!] : v.ticker ? [v.ticker, v.quote] : (PAIR_IN_TEXT.exec(v.task ?? "")?.slice(1, 3) ?? []);
  if (!base || !quote) return undefined;
  if (base === quote) return undefined;
  return { base, quote, id: `${base}-${quote}` };
}

/** Adds the one-pair requirement to an input object schema (a field error on `pair` otherwise). */
export function requirePair<T extends z.ZodType<PairSpec>>(schema: T) {
  return schema.superRefine((v, ctx) => {
    if (!pairOf(v)) ctx.addIssue({ code: "custom", path: ["pair"], message: "a pair like BTC-USD (pair), a ticker (ticker, with quote), or a pair like BTC-USD written in task, with two different assets" });
  });
}

export const VenueSchema = z.enum(VENUES);

/** One venue read: which venue, the exact URL read, when, and whether this answer reused a cached read. */
export const Source = z.object({
  name: z.string(),
  venue: VenueSchema,
  endpoint: z.string(),
  fetched_at: z.string(),
  cached: z.boolean(),
});
export type Source = z.infer<typeof Source>;

export function sourceOf(venue: Venue, read: Read<{ endpoint: string }>): Source {
  return { name: VENUE_NAMES[venue], venue, endpoint: read.value.endpoint, fetched_at: read.fetchedAt.toISOString(), cached: read.cached };
}

/** Binance lists USD pairs in USDT; said wherever a Binance read stands in for a USD price. */
export function usdtNote(venues: readonly Venue[], quote: string): string | null {
  return quote === "USD" && venues.includes("binance") ? "Binance quotes USD pairs in USDT: its figures are the USDT pair's, so they include the USDT/USD basis" : null;
}

/** Rounds a statistic to 10 significant digits (prices stay decimal strings elsewhere). */
export const sig = (n: number) => Number(n.toPrecision(10));

/** A venue failure as a buyer reads it. */
export function failureOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

import { z } from "zod";
import { VENUES, type Quote, type Venue, type VenueClient } from "../market-data/venues.js";
import type { SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// oracle.price-feed: the price of one pair on one venue, read from the venue's public REST API, with
// the read cited (venue, endpoint, time). Reads are cached for a few seconds per (venue, pair) so a
// burst of buyers does not hammer the venue; the citation says when the read was made and whether it
// came from the cache. An upstream failure fails the call, so nothing is charged.

const PAIR = /^([A-Z0-9]{2,10})[-/]([A-Z0-9]{2,10})$/;

const Input = z
  .object({
    pair: z.string().trim().toUpperCase().regex(PAIR, "pair like BTC-USD"),
    venue: z.enum(VENUES).default("coinbase"),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Price = z.string().regex(/^\d+(\.\d+)?$/).describe("decimal string as the venue sent it");
const Output = z.object({
  pair: z.string(),
  venue: z.enum(VENUES),
  venue_symbol: z.string(),
  price: Price,
  bid: Price.nullable(),
  ask: Price.nullable(),
  source: z.object({ venue: z.enum(VENUES), endpoint: z.string(), read_at: Iso, venue_time: z.string().nullable(), cached: z.boolean(), cache_seconds: z.number() }),
  note: z.string().nullable(),
});

export function oraclePriceFeed(venues: VenueClient, cacheMs: number): SkuHandler<Input> {
  const cache = new Map<string, { quote: Quote; readAt: Date }>();
  return {
    skuId: "oracle.price-feed",
    poweredBy: "svc-market-data/venues",
    input: Input,
    output: Output,
    upstreams: (input) => [venues.baseUrl(input.venue as Venue)],
    async run(input, ctx) {
      const [, base, quote] = PAIR.exec(input.pair)!;
      const key = `${input.venue}|${base}-${quote}`;
      let hit = cache.get(key);
      const cached = hit !== undefined && ctx.now.getTime() - hit.readAt.getTime() < cacheMs;
      if (!cached) {
        hit = { quote: await venues.quote(input.venue as Venue, base!, quote!), readAt: new Date() };
        cache.set(key, hit);
      }
      const q = hit!.quote;
      return {
        pair: `${base}-${quote}`,
        venue: q.venue,
        venue_symbol: q.venueSymbol,
        price: q.price,
        bid: q.bid,
        ask: q.ask,
        source: { venue: q.venue, endpoint: q.endpoint, read_at: hit!.readAt.toISOString(), venue_time: q.venueTime, cached, cache_seconds: cacheMs / 1000 },
        note: q.venue === "binance" && quote === "USD" ? "Binance quotes USD pairs in USDT; the price is the USDT pair's" : null,
      };
    },
  };
}

import { z } from "zod";
import { DEFAULT_TAKER_FEE_BPS, opportunities, type FeedBook } from "../market-data/arbitrage.js";
import type { MarketReader, Read } from "../market-data/market-reader.js";
import { VENUES, type BookTop, type Venue } from "../market-data/venues.js";
import { failureOf, pairFields, pairOf, requirePair, Source, sourceOf, usdtNote, VenueSchema, type Pair } from "./market-pair-input.js";
import type { SkuHandler } from "./sku-handler.js";

// oracle.market-arbitrage: one pair's order-book tops on Coinbase Exchange, Kraken and Binance (or the
// venues named), and every cross-venue spread (buy on one venue's ask, sell on another's bid), gross and
// net of both venues' taker fees, entry and exit (market-data/arbitrage.ts states the formulas). Fees are
// the operator's settings (MARKET_*_TAKER_FEE_BPS, by default the venues' lowest public tier) unless the
// buyer states its own per venue. A venue that fails is reported unavailable as long as two venues
// answered; with fewer the call fails (503, nothing charged).

const Fee = z.number().min(0).max(1000);

const Input = requirePair(
  z
    .object({
      ...pairFields,
      venues: z
        .array(VenueSchema)
        .min(2, "at least two venues")
        .refine((v) => new Set(v).size === v.length, "venues must be distinct")
        .default([...VENUES]),
      taker_fee_bps: z.object({ coinbase: Fee.optional(), kraken: Fee.optional(), binance: Fee.optional() }).strict().describe("the buyer's own taker fee per venue (bps), replacing the operator's").optional(),
    })
    .loose(),
);
type Input = z.infer<typeof Input>;

export const OpportunitySchema = z.object({
  buy_venue: VenueSchema,
  sell_venue: VenueSchema,
  buy_ask: z.string(),
  sell_bid: z.string(),
  /** sell_bid - buy_ask in the quote currency, exact. */
  gross_spread: z.string(),
  gross_spread_bps: z.number(),
  taker_fees_bps: z.number(),
  entry_spread_net_bps: z.number(),
  exit_spread_gross_bps: z.number(),
  exit_spread_net_bps: z.number(),
  round_trip_net_bps: z.number(),
  executable_size: z.string(),
  profitable: z.boolean(),
});

export const VenueBookSchema = z.discriminatedUnion("status", [
  z.object({
    venue: VenueSchema,
    status: z.literal("ok"),
    venue_symbol: z.string(),
    bid: z.string(),
    bid_size: z.string(),
    ask: z.string(),
    ask_size: z.string(),
    taker_fee_bps: z.number(),
    taker_fee_source: z.enum(["buyer", "operator"]),
    venue_time: z.string().nullable(),
    source: Source,
  }),
  z.object({ venue: VenueSchema, status: z.literal("unavailable"), error: z.string() }),
]);

export const ArbitrageSection = z.object({
  venues: z.array(VenueBookSchema),
  best: OpportunitySchema,
  opportunities: z.array(OpportunitySchema),
  profitable: z.boolean(),
  note: z.string().nullable(),
});

const Output = ArbitrageSection.extend({
  pair: z.string(),
  quote_note: z.string().nullable(),
  method: z.string(),
  answered_at: z.string(),
});

export const ARBITRAGE_METHOD =
  "order-book tops (best bid/ask); entry = buy at the buy venue's ask and sell at the sell venue's bid, (bid - ask) / ask in bps, net of both taker fees; " +
  "exit = unwinding at the same books (sell at the buy venue's bid, buy at the sell venue's ask), net of both taker fees; round trip = entry + exit; best = highest net entry spread";

export type ArbitrageSection = z.infer<typeof ArbitrageSection>;

/** Reads the venues' book tops and computes the spreads; throws when fewer than two venues answered. */
export async function arbitrageSection(reader: MarketReader, pair: Pair, venues: readonly Venue[], fees: Record<Venue, number>, buyerFees: Partial<Record<Venue, number>> = {}): Promise<ArbitrageSection> {
  const reads = await Promise.allSettled(venues.map((v) => reader.bookTop(v, pair.base, pair.quote)));
  const answered: { venue: Venue; read: Read<BookTop> }[] = [];
  const rows: z.infer<typeof VenueBookSchema>[] = [];
  reads.forEach((r, i) => {
    const venue = venues[i]!;
    if (r.status === "rejected") return rows.push({ venue, status: "unavailable", error: failureOf(r.reason) });
    answered.push({ venue, read: r.value });
    const b = r.value.value;
    rows.push({
      venue,
      status: "ok",
      venue_symbol: b.venueSymbol,
      bid: b.bid.price,
      bid_size: b.bid.size,
      ask: b.ask.price,
      ask_size: b.ask.size,
      taker_fee_bps: buyerFees[venue] ?? fees[venue],
      taker_fee_source: buyerFees[venue] !== undefined ? "buyer" : "operator",
      venue_time: b.venueTime,
      source: sourceOf(venue, r.value),
    });
  });
  if (answered.length < 2) {
    const why = rows.filter((r) => r.status === "unavailable").map((r) => (r as { error: string }).error);
    throw new Error(`${pair.id}: only ${answered.length} of ${venues.length} venues answered (${why.join("; ")}); a spread needs two`);
  }
  const books: FeedBook[] = answered.map(({ venue, read }) => ({ book: read.value, takerFeeBps: buyerFees[venue] ?? fees[venue] }));
  const all = opportunities(books);
  const best = all[0]!;
  return {
    venues: rows,
    best,
    opportunities: all,
    profitable: best.profitable,
    note: best.profitable
      ? null
      : best.gross_spread_bps > 0
        ? `no profitable spread: the best gross spread (${best.gross_spread_bps} bps, ${best.buy_venue} to ${best.sell_venue}) does not cover the taker fees (${best.taker_fees_bps} bps)`
        : "no profitable spread: no venue's bid is above another venue's ask",
  };
}

export function oracleMarketArbitrage(reader: MarketReader, fees: Record<Venue, number> = DEFAULT_TAKER_FEE_BPS): SkuHandler<Input> {
  return {
    skuId: "oracle.market-arbitrage",
    poweredBy: "svc-market-data/arbitrage",
    input: Input,
    output: Output,
    // Only venues the call cannot do without: with three venues any one may fail (its open breaker makes
    // it fail fast and it is reported unavailable), so no single breaker refuses the call; with two, both.
    upstreams: (input) => (input.venues.length === 2 ? input.venues.map((v) => reader.venues.baseUrl(v)) : []),
    async run(input, ctx) {
      const pair = pairOf(input)!;
      const section = await arbitrageSection(reader, pair, input.venues, fees, input.taker_fee_bps ?? {});
      const answered = section.venues.filter((v) => v.status === "ok").map((v) => v.venue);
      return { pair: pair.id, ...section, quote_note: usdtNote(answered, pair.quote), method: ARBITRAGE_METHOD, answered_at: ctx.now.toISOString() };
    },
  };
}

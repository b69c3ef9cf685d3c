import { compareDecimal, subDecimal } from "./decimal.js";
import type { BookTop } from "./market-types.js";
import type { Venue } from "./venue-http.js";

// Cross-venue spreads from order-book tops. For every ordered pair of venues (buy on A, sell on B):
//   gross spread         = bid_B - ask_A, exact in the quote currency (decimal strings)
//   gross spread (bps)   = (bid_B - ask_A) / ask_A * 10 000
//   entry spread net     = gross bps - taker fee A - taker fee B   (opening: buy A at its ask, sell B at its bid)
//   exit spread gross    = (bid_A - ask_B) / ask_B * 10 000         (closing at today's books: sell A at its bid, buy B at its ask)
//   exit spread net      = exit gross bps - taker fee A - taker fee B
//   round trip net       = entry net + exit net (opening and closing right away at these books)
//   executable size      = min(ask size on A, bid size on B), at the top of the books
// The best opportunity is the one with the highest entry spread net of fees; it is profitable only when
// that net spread is above zero. Basis points are numbers rounded to 0.01 bps.

/** Taker fees of the lowest public fee tier (bps): Coinbase Exchange 0.60 %, Kraken Pro 0.40 %, Binance spot 0.10 %. */
export const DEFAULT_TAKER_FEE_BPS: Record<Venue, number> = { coinbase: 60, kraken: 40, binance: 10 };

export interface FeedBook {
  book: BookTop;
  takerFeeBps: number;
}

export interface Opportunity {
  buy_venue: Venue;
  sell_venue: Venue;
  buy_ask: string;
  sell_bid: string;
  gross_spread: string;
  gross_spread_bps: number;
  taker_fees_bps: number;
  entry_spread_net_bps: number;
  exit_spread_gross_bps: number;
  exit_spread_net_bps: number;
  round_trip_net_bps: number;
  executable_size: string;
  profitable: boolean;
}

const bps = (n: number) => Math.round(n * 100) / 100 || 0;

export function opportunity(buy: FeedBook, sell: FeedBook): Opportunity {
  const ask = buy.book.ask.price;
  const bid = sell.book.bid.price;
  const gross = subDecimal(bid, ask);
  const fees = buy.takerFeeBps + sell.takerFeeBps;
  const grossBps = (Number(gross) / Number(ask)) * 10_000;
  const exitGrossBps = (Number(subDecimal(buy.book.bid.price, sell.book.ask.price)) / Number(sell.book.ask.price)) * 10_000;
  const entryNet = grossBps - fees;
  const exitNet = exitGrossBps - fees;
  const size = compareDecimal(buy.book.ask.size, sell.book.bid.size) <= 0 ? buy.book.ask.size : sell.book.bid.size;
  return {
    buy_venue: buy.book.venue,
    sell_venue: sell.book.venue,
    buy_ask: ask,
    sell_bid: bid,
    gross_spread: gross,
    gross_spread_bps: bps(grossBps),
    taker_fees_bps: bps(fees),
    entry_spread_net_bps: bps(entryNet),
    exit_spread_gross_bps: bps(exitGrossBps),
    exit_spread_net_bps: bps(exitNet),
    round_trip_net_bps: bps(entryNet + exitNet),
    executable_size: size,
    profitable: entryNet > 0,
  };
}

/** Every ordered venue pair, best entry spread net of fees first. */
export function opportunities(books: readonly FeedBook[]): Opportunity[] {
  const out: Opportunity[] = [];
  for (const buy of books) for (const sell of books) if (buy.book.venue !== sell.book.venue) out.push(opportunity(buy, sell));
  return out.sort((a, b) => b.entry_spread_net_bps - a.entry_spread_net_bps || b.gross_spread_bps - a.gross_spread_bps);
}

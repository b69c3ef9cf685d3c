import type { Venue } from "./venue-http.js";

// The shapes the venue adapters return, the same for every venue. Prices and sizes stay the venue's
// decimal strings; only statistics (indicators.ts) turn them into numbers.

/** Candle intervals every one of the three venues serves (Coinbase granularities, Kraken minutes, Binance interval names). */
export const INTERVALS = ["1m", "5m", "15m", "1h", "1d"] as const;
export type Interval = (typeof INTERVALS)[number];

export const INTERVAL_SECONDS: Record<Interval, number> = { "1m": 60, "5m": 300, "15m": 900, "1h": 3_600, "1d": 86_400 };

export interface Candle {
  /** Open time of the candle, unix seconds (UTC). */
  time: number;
  open: string;
  high: string;
  low: string;
  close: string;
  /** Base-asset volume. */
  volume: string;
}

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

export interface BookLevel {
  price: string;
  size: string;
}

/** The best bid and best ask of a venue's order book. */
export interface BookTop {
  venue: Venue;
  venueSymbol: string;
  bid: BookLevel;
  ask: BookLevel;
  endpoint: string;
  fetchedAt: Date;
  /** The venue's own timestamp of the book, when it gives one (ISO 8601). */
  venueTime: string | null;
}

/** Closed candles of one pair on one venue, oldest first. */
export interface CandleSeries {
  venue: Venue;
  venueSymbol: string;
  interval: Interval;
  candles: Candle[];
  endpoint: string;
  fetchedAt: Date;
}

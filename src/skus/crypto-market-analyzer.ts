import { z } from "zod";
import { subDecimal } from "../market-data/decimal.js";
import type { MarketReader } from "../market-data/market-reader.js";
import { INTERVALS } from "../market-data/market-types.js";
import { VENUE_NAMES } from "../market-data/venues.js";
import { assetSentiment, newsSentimentBlock, NewsSentimentBlock } from "../news/asset-sentiment.js";
import type { FeedReader } from "../news/feed-reader.js";
import { ChannelList } from "../news/news-deliverable.js";
import { historyFrom, HistorySection } from "./oracle-historical-analysis.js";
import { pairFields, pairOf, requirePair, Source, sourceOf, usdtNote, VenueSchema } from "./market-pair-input.js";
import type { SkuHandler } from "./sku-handler.js";

// crypto.market-analyzer: one ticker's market data, indicators and news sentiment in one read:
//   market      the venue's ticker (last price, bid, ask) and order-book top (best levels, spread);
//   indicators  the historical analysis of its closed candles (SMA/EMA 20 and 50, RSI 14, drawdown,
//               realized volatility, regime, crossover, recent range: oracle.historical-analysis);
//   sentiment   the lexicon sentiment of the curated feeds' stories naming the asset or its ticker.
// The pair is `ticker` (+ `quote`, USD by default), `pair`, or a pair written in `task`; `venue`
// (default coinbase), `interval` (default 1d) and `lookback` (20-250 candles, default 120). Every read
// is cited. A venue failure or every feed failing fails the call (503, nothing charged); fewer than 20
// closed candles is refused (409 `insufficient_history`, nothing charged); no story about the asset is
// a finding (sentiment label null, 0 stories).

const Input = requirePair(
  z
    .object({
      ...pairFields,
      venue: VenueSchema.default("coinbase"),
      interval: z.enum(INTERVALS).default("1d"),
      lookback: z.number().int().min(20).max(250).default(120),
      news_channels: ChannelList.optional(),
    })
    .loose(),
);
type Input = z.infer<typeof Input>;

const Level = z.object({ price: z.string(), size: z.string() });

export const MarketAnalyzerOutput = z.object({
  pair: z.string(),
  venue: VenueSchema,
  market: z.object({
    venue_symbol: z.string(),
    price: z.string(),
    bid: z.string().nullable(),
    ask: z.string().nullable(),
    venue_time: z.string().nullable(),
    book: z.object({ bid: Level, ask: Level, spread: z.string(), spread_bps: z.number(), mid: z.number() }),
    sources: z.object({ ticker: Source, book: Source }),
  }),
  indicators: HistorySection,
  sentiment: NewsSentimentBlock,
  summary: z.string(),
  quote_note: z.string().nullable(),
  answered_at: z.string(),
});
type Output = z.infer<typeof MarketAnalyzerOutput>;

const pctText = (n: number | null) => (n === null ? "n/a" : `${n}%`);

function summaryOf(o: Omit<Output, "summary" | "quote_note" | "answered_at">): string {
  const i = o.indicators;
  const s = o.sentiment;
  const parts = [
    `${o.pair} on ${VENUE_NAMES[o.venue]}: last ${o.market.price}, spread ${o.market.book.spread_bps} bps`,
    `${i.candles_used} ${i.interval} candles: regime ${i.regime.label}, RSI14 ${i.rsi_14 ?? "n/a"}${i.rsi_state ? ` (${i.rsi_state})` : ""}, change ${pctText(i.change_pct)}, max drawdown ${pctText(i.max_drawdown.pct)}, realized volatility ${pctText(i.realized_volatility_annualized_pct)} annualized`,
    s.stories ? `news sentiment ${s.label} (${s.normalized_score}) over ${s.stories} stories from ${s.feeds_read} feeds` : `no story about it in the ${s.feeds_read} feeds read`,
  ];
  return `${parts.join("; ")}.`;
}

export function cryptoMarketAnalyzer(market: MarketReader, news: FeedReader): SkuHandler<Input> {
  return {
    skuId: "crypto.market-analyzer",
    poweredBy: "svc-market-data/indicators+svc-sentiment/lexicon",
    input: Input,
    output: MarketAnalyzerOutput,
    upstreams: (input) => [market.venues.baseUrl(input.venue)],
    async run(input, ctx) {
      const pair = pairOf(input)!;
      const v = input.venue;
      const [quote, book, candles, sentiment] = await Promise.all([
        market.quote(v, pair.base, pair.quote),
        market.bookTop(v, pair.base, pair.quote),
        market.candles(v, pair.base, pair.quote, input.interval, input.lookback),
        assetSentiment(news, pair.base, { channels: input.news_channels, now: ctx.now }),
      ]);
      const indicators = historyFrom(pair, v, candles, input.lookback);
      const b = book.value;
      const mid = (Number(b.bid.price) + Number(b.ask.price)) / 2;
      const spread = subDecimal(b.ask.price, b.bid.price);
      const body = {
        pair: pair.id,
        venue: v,
        market: {
          venue_symbol: quote.value.venueSymbol,
          price: quote.value.price,
          bid: quote.value.bid,
          ask: quote.value.ask,
          venue_time: quote.value.venueTime,
          book: { bid: { price: b.bid.price, size: b.bid.size }, ask: { price: b.ask.price, size: b.ask.size }, spread, spread_bps: Math.round((Number(spread) / mid) * 10_000 * 100) / 100, mid: Number(mid.toPrecision(12)) },
          sources: { ticker: sourceOf(v, quote), book: sourceOf(v, book) },
        },
        indicators,
        sentiment: newsSentimentBlock(sentiment),
      };
      return { ...body, summary: summaryOf(body), quote_note: usdtNote([v], pair.quote), answered_at: ctx.now.toISOString() };
    },
  };
}

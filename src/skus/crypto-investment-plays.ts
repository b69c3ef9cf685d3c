import { z } from "zod";
import { subDecimal } from "../market-data/decimal.js";
import { REGIMES } from "../market-data/indicators.js";
import type { MarketReader } from "../market-data/market-reader.js";
import { VENUE_NAMES, type Venue } from "../market-data/venues.js";
import { assetSentiment, Headline, newsSentimentBlock } from "../news/asset-sentiment.js";
import type { FeedReader } from "../news/feed-reader.js";
import { isKnownTicker } from "../news/topic-match.js";
import { fits, RISK_BANDS, RISK_MODEL, riskScore, STANCE_RULES, stanceOf, STANCES, TOLERANCES, type Stance } from "../plays/risk-score.js";
import { LABELS } from "../sentiment/lexicon-sentiment.js";
import { historyFrom } from "./oracle-historical-analysis.js";
import { failureOf, Source, sourceOf, usdtNote, VenueSchema } from "./market-pair-input.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// crypto.investment-plays: for one to five crypto assets, a play each (a stance from documented rules
// over the trend regime, RSI and news sentiment) with a numeric risk score 0-100 (plays/risk-score.ts:
// volatility, drawdown, trend, momentum, liquidity and news components, each reported), whether it fits
// the buyer's risk tolerance, support/resistance levels, the figures and reads behind it, and a
// disclaimer. Per asset: 120 closed daily candles and the order-book top of `venue` (default coinbase),
// and the curated feeds' stories about it. Plays that fit the tolerance come first, least risky first.
// An asset whose data cannot be read is listed as unavailable; if none can be read the call fails (503,
// or 409 `insufficient_history` when every asset lacks history; nothing charged); every news feed
// failing fails the call (503).

export const INTERVAL = "1d";
export const LOOKBACK = 120;
const TICKER = /^[A-Z0-9]{2,10}$/;
const PAIR_IN_TEXT = /\b([A-Z][A-Z0-9]{1,9})[-/][A-Z][A-Z0-9]{1,9}\b/g;
const WORD_IN_TEXT = /\b[A-Z][A-Z0-9]{1,9}\b/g;

export const DISCLAIMER =
  "Not financial advice. These plays are computed mechanically from public exchange data and news headlines at the time stated; they know nothing of your circumstances. Past prices, volatility and sentiment do not predict returns; crypto assets are highly volatile and can lose all their value. Do your own research and never invest money you cannot afford to lose.";

const Ticker = z.string().trim().toUpperCase().regex(TICKER, "a ticker like BTC");

const Input = z
  .object({
    tickers: z.array(Ticker).min(1).max(5).optional(),
    ticker: Ticker.optional(),
    pair: z.string().trim().toUpperCase().regex(/^[A-Z0-9]{2,10}[-/][A-Z0-9]{2,10}$/, "pair like BTC-USD").optional(),
    quote: Ticker.default("USD"),
    venue: VenueSchema.default("coinbase"),
    risk_tolerance: z.enum(TOLERANCES).default("medium"),
    task: z.string().max(4096).optional(),
  })
  .loose()
  .superRefine((v, ctx) => {
    const assets = assetsOf(v);
    if (assets.length === 0) ctx.addIssue({ code: "custom", path: ["tickers"], message: "one to five tickers (tickers, ticker, pair, or known tickers such as BTC written in task)" });
    else if (assets.length > 5) ctx.addIssue({ code: "custom", path: ["task"], message: "at most five assets" });
    else if (assets.includes(v.quote)) ctx.addIssue({ code: "custom", path: ["quote"], message: "the quote asset cannot be one of the assets" });
  });
type Input = z.infer<typeof Input>;

/** The assets of a call: `tickers`, else `ticker`, else the base of `pair`, else pairs or known tickers written in `task`. */
function assetsOf(v: { tickers?: string[] | undefined; ticker?: string | undefined; pair?: string | undefined; task?: string | undefined }): string[] {
  if (v.tickers) return [...new Set(v.tickers)];
  if (v.ticker) return [v.ticker];
  if (v.pair) return [v.pair.split(/[-/]/)[0]!];
  const text = v.task ?? "";
  const fromPairs = [...text.matchAll(PAIR_IN_TEXT)].map((m) => m[1]!);
  const known = (text.match(WORD_IN_TEXT) ?? []).filter(isKnownTicker);
  return [...new Set([...fromPairs, ...known])];
}

const Num = z.number().nullable();

const Play = z.object({
  asset: z.string(),
  pair: z.string(),
  stance: z.enum(STANCES),
  rationale: z.array(z.string()),
  fits_risk_tolerance: z.boolean(),
  risk: z.object({
    score: z.number(),
    band: z.enum(RISK_BANDS),
    components: z.object({ volatility: z.number(), drawdown: z.number(), trend: z.number(), momentum: z.number(), liquidity: z.number(), sentiment: z.number() }),
  }),
  figures: z.object({
    last_close: z.string(),
    change_pct: Num,
    regime: z.enum(REGIMES),
    rsi_14: Num,
    realized_volatility_annualized_pct: Num,
    max_drawdown_pct: z.number(),
    spread_bps: z.number(),
    news_label: z.enum(LABELS).nullable(),
    news_score: Num,
    news_stories: z.number().int(),
  }),
  levels: z.object({ support: z.string(), resistance: z.string(), candles: z.number().int() }).nullable(),
  headlines: z.array(Headline),
  sources: z.object({ candles: Source, book: Source }),
});
type Play = z.infer<typeof Play>;

export const InvestmentPlaysOutput = z.object({
  risk_tolerance: z.enum(TOLERANCES),
  venue: VenueSchema,
  quote: z.string(),
  interval: z.literal(INTERVAL),
  lookback: z.number().int(),
  plays: z.array(Play),
  unavailable: z.array(z.object({ asset: z.string(), reason: z.string() })),
  risk_model: z.object({ formula: z.string(), bands: z.string(), components_max: z.record(z.string(), z.number()) }),
  stance_rules: z.string(),
  news_feeds: z.object({ read: z.number().int(), failed: z.number().int() }),
  quote_note: z.string().nullable(),
  disclaimer: z.string(),
  answered_at: z.string(),
});

const RATIONALE: Record<Stance, string> = {
  avoid: "downtrend with negative news: no entry until the trend turns",
  wait_for_pullback: "RSI14 is overbought: wait for a pullback before entering",
  watch_for_reversal: "RSI14 is oversold: watch for a reversal before entering",
  accumulate: "uptrend: accumulate in steps, with the recent support as the level that invalidates the play",
  reduce: "downtrend: reduce exposure until the trend turns",
  range_trade: "sideways market: buy near support, trim near resistance",
  no_clear_play: "not enough history to call a trend",
};

async function playOf(market: MarketReader, news: FeedReader, asset: string, input: Input, now: Date): Promise<{ play: Play; feeds: { read: number; failed: number } }> {
  const pair = { base: asset, quote: input.quote, id: `${asset}-${input.quote}` };
  const v: Venue = input.venue;
  const [candles, book, sentiment] = await Promise.all([
    market.candles(v, pair.base, pair.quote, INTERVAL, LOOKBACK),
    market.bookTop(v, pair.base, pair.quote),
    assetSentiment(news, asset, { now }),
  ]);
  const h = historyFrom(pair, v, candles, LOOKBACK);
  const b = book.value;
  const mid = (Number(b.bid.price) + Number(b.ask.price)) / 2;
  const spreadBps = Math.round((Number(subDecimal(b.ask.price, b.bid.price)) / mid) * 10_000 * 100) / 100;
  const s = sentiment.sentiment;
  const risk = riskScore({ volatilityPct: h.realized_volatility_annualized_pct, drawdownPct: h.max_drawdown.pct, regime: h.regime.label, rsi: h.rsi_14, spreadBps, newsScore: s.normalized_score });
  const stance = stanceOf(h.regime.label, h.rsi_state, s.label);
  const rationale = [
    RATIONALE[stance],
    `regime ${h.regime.label} (${h.regime.rule})`,
    `RSI14 ${h.rsi_14 ?? "n/a"}${h.rsi_state ? ` (${h.rsi_state})` : ""}`,
    `realized volatility ${h.realized_volatility_annualized_pct ?? "n/a"}% annualized, maximum drawdown ${h.max_drawdown.pct}% over ${h.candles_used} daily candles`,
    s.count ? `news ${s.label} (${s.normalized_score}) over ${s.count} stories` : "no story about it in the curated feeds",
  ];
  const play: Play = {
    asset,
    pair: pair.id,
    stance,
    rationale,
    fits_risk_tolerance: fits(risk.band, input.risk_tolerance),
    risk,
    figures: {
      last_close: h.last_close,
      change_pct: h.change_pct,
      regime: h.regime.label,
      rsi_14: h.rsi_14,
      realized_volatility_annualized_pct: h.realized_volatility_annualized_pct,
      max_drawdown_pct: h.max_drawdown.pct,
      spread_bps: spreadBps,
      news_label: s.label,
      news_score: s.normalized_score,
      news_stories: s.count,
    },
    levels: h.recent_range ? { support: h.recent_range.support, resistance: h.recent_range.resistance, candles: h.recent_range.candles } : null,
    headlines: newsSentimentBlock(sentiment, 3).headlines,
    sources: { candles: h.source, book: sourceOf(v, book) },
  };
  return { play, feeds: { read: sentiment.scan.stats.feeds_read, failed: sentiment.scan.stats.feeds_failed } };
}

export function cryptoInvestmentPlays(market: MarketReader, news: FeedReader): SkuHandler<Input> {
  return {
    skuId: "crypto.investment-plays",
    poweredBy: "svc-market-data/indicators+svc-sentiment/lexicon",
    input: Input,
    output: InvestmentPlaysOutput,
    upstreams: (input) => [market.venues.baseUrl(input.venue)],
    async run(input, ctx) {
      const assets = assetsOf(input);
      const settled = await Promise.allSettled(assets.map((a) => playOf(market, news, a, input, ctx.now)));
      const plays: Play[] = [];
      let feeds = { read: 0, failed: 0 };
      const unavailable: { asset: string; reason: string }[] = [];
      const errors: unknown[] = [];
      settled.forEach((r, i) => {
        if (r.status === "fulfilled") {
          plays.push(r.value.play);
          feeds = r.value.feeds; // every asset's scan reads the same (shared, cached) feeds
        } else {
          errors.push(r.reason);
          unavailable.push({ asset: assets[i]!, reason: failureOf(r.reason) });
        }
      });
      if (plays.length === 0) {
        const refusal = errors.find((e): e is SkuRefusal => e instanceof SkuRefusal);
        if (refusal && errors.every((e) => e instanceof SkuRefusal)) throw refusal;
        throw new Error(`no asset could be read on ${VENUE_NAMES[input.venue]}: ${unavailable.map((u) => `${u.asset}: ${u.reason}`).join("; ")}`);
      }
      plays.sort((a, b) => Number(b.fits_risk_tolerance) - Number(a.fits_risk_tolerance) || a.risk.score - b.risk.score);
      return {
        risk_tolerance: input.risk_tolerance,
        venue: input.venue,
        quote: input.quote,
        interval: INTERVAL,
        lookback: LOOKBACK,
        plays,
        unavailable,
        risk_model: { ...RISK_MODEL, components_max: { ...RISK_MODEL.components_max } },
        stance_rules: STANCE_RULES,
        news_feeds: feeds,
        quote_note: usdtNote([input.venue], input.quote),
        disclaimer: DISCLAIMER,
        answered_at: ctx.now.toISOString(),
      };
    },
  };
}


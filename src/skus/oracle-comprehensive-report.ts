import { z } from "zod";
import type { MarketReader } from "../market-data/market-reader.js";
import { UpstreamError, VENUE_NAMES, VENUES, type Quote, type Venue } from "../market-data/venues.js";
import { candlesFor, volatilityFrom, VolatilitySection } from "./oracle-volatility-monitor.js";
import { historyFrom, HistorySection } from "./oracle-historical-analysis.js";
import { arbitrageSection, ArbitrageSection } from "./oracle-market-arbitrage.js";
import { failureOf, pairFields, pairOf, requirePair, sig, Source, sourceOf, usdtNote, VenueSchema, type Pair } from "./market-pair-input.js";
import type { SkuHandler } from "./sku-handler.js";

// oracle.comprehensive-report: one pair's market picture in one deliverable, from the three venues'
// public APIs: the price on each venue (tickers) with their median and dispersion, realized volatility
// (oracle.volatility-monitor's windows and levels), historical analysis of 120 daily candles
// (oracle.historical-analysis), cross-venue arbitrage (oracle.market-arbitrage), and the news sentiment
// of the base asset over the curated feeds (market-news-sentiment.ts). `content_markdown` tells it in prose with a numbered citation [n]
// after every figure; `sources` lists each read (venue, endpoint, fetch time, cached) under its number,
// and every structured section carries its own `source`.
//
// Candles come from `venue` (default coinbase); when it fails the other venues are tried in order and
// the one used is named. The call fails (503, nothing charged) when no venue gives a price or none gives
// candles; arbitrage with fewer than two order books, or a failing sentiment provider, is reported as
// unavailable inside the report instead.

export const HISTORY_INTERVAL = "1d";
export const HISTORY_LOOKBACK = 120;

const Input = requirePair(
  z
    .object({
      ...pairFields,
      venue: VenueSchema.default("coinbase"),
    })
    .loose(),
);
type Input = z.infer<typeof Input>;

const PriceRow = z.discriminatedUnion("status", [
  z.object({ venue: VenueSchema, status: z.literal("ok"), venue_symbol: z.string(), price: z.string(), bid: z.string().nullable(), ask: z.string().nullable(), venue_time: z.string().nullable(), source: Source }),
  z.object({ venue: VenueSchema, status: z.literal("unavailable"), error: z.string() }),
]);

const PriceSection = z.object({
  venues: z.array(PriceRow),
  /** Median of the venues' prices (the middle price, or the mean of the two middle ones). */
  median: z.number(),
  low: z.object({ venue: VenueSchema, price: z.string() }),
  high: z.object({ venue: VenueSchema, price: z.string() }),
  /** (high - low) / median in basis points. */
  dispersion_bps: z.number(),
});
type PriceSection = z.infer<typeof PriceSection>;

const SentimentLabel = z.enum(["positive", "neutral", "negative"]);

/** News sentiment about the base asset, as a wired provider reports it. */
export const SentimentFigures = z.object({
  engine: z.string(),
  label: SentimentLabel.nullable(),
  normalized_score: z.number().nullable(),
  stories: z.number().int(),
  feeds_read: z.number().int(),
  channels: z.array(z.string()),
  headlines: z.array(z.object({ title: z.string(), url: z.string().nullable(), published_at: z.string().nullable(), label: SentimentLabel, source: z.object({ name: z.string(), feed_url: z.string(), fetched_at: z.string(), cached: z.boolean() }) })),
});
export type SentimentFigures = z.infer<typeof SentimentFigures>;
export type SentimentProvider = (asset: string, now: Date) => Promise<SentimentFigures>;

const SentimentSection = z.union([SentimentFigures.extend({ status: z.literal("ok") }), z.object({ status: z.literal("unavailable"), reason: z.string() })]);

/** A numbered read: a venue read, or a news feed read (venue null). */
const CitedSource = Source.extend({ id: z.number().int(), venue: VenueSchema.nullable(), read: z.string() });
type Citable = Omit<z.infer<typeof CitedSource>, "id" | "read">;

const Output = z.object({
  pair: z.string(),
  title: z.string(),
  content_markdown: z.string(),
  price: PriceSection,
  volatility: VolatilitySection,
  history: HistorySection,
  arbitrage: z.union([ArbitrageSection.extend({ status: z.literal("ok") }), z.object({ status: z.literal("unavailable"), reason: z.string() })]),
  sentiment: SentimentSection,
  candle_venue: z.object({ venue: VenueSchema, requested: VenueSchema, fallback_reason: z.string().nullable() }),
  sources: z.array(CitedSource),
  quote_note: z.string().nullable(),
  answered_at: z.string(),
});

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function priceSection(reader: MarketReader, pair: Pair): Promise<PriceSection> {
  const reads = await Promise.allSettled(VENUES.map((v) => reader.quote(v, pair.base, pair.quote)));
  const rows: z.infer<typeof PriceRow>[] = reads.map((r, i) => {
    const venue = VENUES[i]!;
    if (r.status === "rejected") return { venue, status: "unavailable", error: failureOf(r.reason) };
    const q: Quote = r.value.value;
    return { venue, status: "ok", venue_symbol: q.venueSymbol, price: q.price, bid: q.bid, ask: q.ask, venue_time: q.venueTime, source: sourceOf(venue, r.value) };
  });
  const ok = rows.filter((r): r is Extract<typeof r, { status: "ok" }> => r.status === "ok");
  if (!ok.length) throw new Error(`${pair.id}: no venue gave a price (${rows.map((r) => (r as { error: string }).error).join("; ")})`);
  const byPrice = [...ok].sort((a, b) => Number(a.price) - Number(b.price));
  const mid = median(ok.map((r) => Number(r.price)));
  const low = byPrice[0]!;
  const high = byPrice.at(-1)!;
  return {
    venues: rows,
    median: sig(mid),
    low: { venue: low.venue, price: low.price },
    high: { venue: high.venue, price: high.price },
    dispersion_bps: Math.round(((Number(high.price) - Number(low.price)) / mid) * 10_000 * 100) / 100,
  };
}

/** Hourly and daily candles from the requested venue, else the first other venue that answers. */
async function candleReads(reader: MarketReader, pair: Pair, requested: Venue) {
  const order = [requested, ...VENUES.filter((v) => v !== requested)];
  const failures: string[] = [];
  for (const venue of order) {
    try {
      const [hourly, daily] = await Promise.all([
        reader.candles(venue, pair.base, pair.quote, "1h", candlesFor("1h")),
        reader.candles(venue, pair.base, pair.quote, HISTORY_INTERVAL, Math.max(HISTORY_LOOKBACK, candlesFor("1d"))),
      ]);
      return { venue, hourly, daily, fallbackReason: failures.length ? failures.join("; ") : null };
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      failures.push(err.message);
    }
  }
  throw new Error(`${pair.id}: no venue gave candles (${failures.join("; ")})`);
}

/** Numbers each distinct read once, in order of first citation. */
class Citations {
  readonly list: z.infer<typeof CitedSource>[] = [];
  cite(source: Citable, read: string): string {
    let hit = this.list.find((s) => s.endpoint === source.endpoint && s.fetched_at === source.fetched_at);
    if (!hit) this.list.push((hit = { id: this.list.length + 1, read, ...source }));
    return `[${hit.id}]`;
  }
}

const pctText = (n: number | null) => (n === null ? "n/a" : `${n > 0 ? "+" : ""}${n}%`);
const num = (n: number | null) => (n === null ? "n/a" : String(n));

function markdown(pair: Pair, r: { price: PriceSection; volatility: VolatilitySection; history: HistorySection; arbitrage: z.infer<typeof Output>["arbitrage"]; sentiment: z.infer<typeof SentimentSection>; quoteNote: string | null; answeredAt: string }, c: Citations): string {
  const L: string[] = [`# ${pair.id} market report`, "", `Answered ${r.answeredAt} from the venues' public market-data APIs. Each figure cites the read it comes from: [n] refers to Sources below.`, ""];
  L.push("## Price across venues", "", "| Venue | Price | Bid | Ask | Source |", "|---|---|---|---|---|");
  const priceCites: string[] = [];
  for (const v of r.price.venues) {
    if (v.status === "ok") {
      const cite = c.cite(v.source, "ticker");
      priceCites.push(cite);
      L.push(`| ${VENUE_NAMES[v.venue]} | ${v.price} | ${v.bid ?? "n/a"} | ${v.ask ?? "n/a"} | ${cite} |`);
    } else L.push(`| ${VENUE_NAMES[v.venue]} | unavailable: ${v.error} | | | |`);
  }
  L.push("", `Median ${r.price.median}; low ${r.price.low.price} (${VENUE_NAMES[r.price.low.venue]}), high ${r.price.high.price} (${VENUE_NAMES[r.price.high.venue]}); dispersion ${r.price.dispersion_bps} bps ${priceCites.join("")}.`);
  if (r.quoteNote) L.push("", `Note: ${r.quoteNote}.`);

  const vol = r.volatility;
  L.push("", `## Realized volatility (${VENUE_NAMES[vol.venue]})`, "");
  for (const w of vol.windows) {
    const cite = c.cite(w.source, `${w.interval} candles`);
    L.push(w.annualized_pct === null ? `- ${w.window}: unavailable (too few candles) ${cite}` : `- ${w.window}: ${w.annualized_pct}% annualized over ${w.returns_used} ${w.interval} returns, ${w.level} ${cite}`);
  }
  L.push("", `Level: **${vol.level}**${vol.alert ? " (alert)" : ""}. Thresholds: low below ${vol.thresholds.low_below_pct}%, elevated from ${vol.thresholds.elevated_from_pct}%, extreme from ${vol.thresholds.extreme_from_pct}% a year. Method: ${vol.method}.`);

  const h = r.history;
  const hc = c.cite(h.source, `${h.interval} candles`);
  const ma = h.moving_averages;
  L.push("", `## Historical analysis (${h.candles_used} ${h.interval} candles, ${VENUE_NAMES[h.venue]})`, "");
  L.push(`- Last close ${h.last_close}; change over the period ${pctText(h.change_pct)} ${hc}`);
  L.push(`- SMA20 ${num(ma.sma_20)}, SMA50 ${num(ma.sma_50)}, EMA20 ${num(ma.ema_20)}, EMA50 ${num(ma.ema_50)}; close vs SMA50 ${pctText(ma.close_vs_sma_50_pct)} ${hc}`);
  L.push(`- RSI14 ${num(h.rsi_14)}${h.rsi_state ? ` (${h.rsi_state})` : ""} ${hc}`);
  L.push(`- Maximum drawdown ${h.max_drawdown.pct}%${h.max_drawdown.peak_time ? ` (peak ${h.max_drawdown.peak_close} on ${h.max_drawdown.peak_time.slice(0, 10)}, trough ${h.max_drawdown.trough_close} on ${h.max_drawdown.trough_time!.slice(0, 10)})` : ""} ${hc}`);
  L.push(`- Regime: **${h.regime.label}** (${h.regime.rule}) ${hc}`);
  if (h.last_sma_crossover) L.push(`- Last SMA20/SMA50 crossover: ${h.last_sma_crossover.direction} on ${h.last_sma_crossover.time.slice(0, 10)} ${hc}`);
  if (h.recent_range) L.push(`- ${h.recent_range.candles}-candle range: support ${h.recent_range.support}, resistance ${h.recent_range.resistance} ${hc}`);

  L.push("", "## Cross-venue arbitrage", "");
  const a = r.arbitrage;
  if (a.status === "ok") {
    const bookCite = (v: Venue) => {
      const row = a.venues.find((x) => x.venue === v);
      return row && row.status === "ok" ? c.cite(row.source, "order book") : "";
    };
    const b = a.best;
    const cites = `${bookCite(b.buy_venue)}${bookCite(b.sell_venue)}`;
    L.push(`Best: buy on ${VENUE_NAMES[b.buy_venue]} at ${b.buy_ask}, sell on ${VENUE_NAMES[b.sell_venue]} at ${b.sell_bid}: gross ${b.gross_spread} ${pair.quote} (${b.gross_spread_bps} bps) ${cites}; after ${b.taker_fees_bps} bps of taker fees the entry spread is ${b.entry_spread_net_bps} bps and the exit spread ${b.exit_spread_net_bps} bps ${cites}.`);
    L.push("", a.profitable ? `The best spread is profitable after taker fees ${cites}.` : `${a.note!.charAt(0).toUpperCase()}${a.note!.slice(1)} ${cites}.`);
    const down = a.venues.filter((v) => v.status === "unavailable");
    if (down.length) L.push("", `Unavailable: ${down.map((v) => `${VENUE_NAMES[v.venue]} (${(v as { error: string }).error})`).join("; ")}.`);
  } else L.push(`Unavailable: ${a.reason}.`);

  L.push("", "## News sentiment", "");
  const s = r.sentiment;
  if (s.status === "ok") {
    if (!s.stories) L.push(`No story naming ${pair.base} in the ${s.feeds_read} ${s.channels.join(" and ")} feeds read.`);
    else {
      const cites = [...new Set(s.headlines.map((x) => c.cite({ name: x.source.name, venue: null, endpoint: x.source.feed_url, fetched_at: x.source.fetched_at, cached: x.source.cached }, "news feed")))];
      L.push(`**${s.label}** (mean lexicon score ${num(s.normalized_score)}) over ${s.stories} stories naming ${pair.base} (${s.channels.join(" and ")} feeds, engine ${s.engine}) ${cites.join("")}.`, "");
      for (const x of s.headlines) L.push(`- ${x.title} (${x.label}) ${c.cite({ name: x.source.name, venue: null, endpoint: x.source.feed_url, fetched_at: x.source.fetched_at, cached: x.source.cached }, "news feed")}`);
    }
  } else L.push(`Unavailable: ${s.reason}.`);

  L.push("", "## Sources", "");
  for (const s of c.list) L.push(`${s.id}. ${s.name} ${s.read}: ${s.endpoint} (fetched ${s.fetched_at}${s.cached ? ", from cache" : ""})`);
  return L.join("\n");
}

export function oracleComprehensiveReport(reader: MarketReader, fees: Record<Venue, number>, sentimentOf?: SentimentProvider): SkuHandler<Input> {
  return {
    skuId: "oracle.comprehensive-report",
    poweredBy: "svc-market-data/report",
    input: Input,
    output: Output,
    // No single venue is indispensable (prices need one venue, candles fall back, arbitrage and sentiment
    // degrade), so no one breaker refuses the call; an open breaker makes that venue fail fast instead.
    upstreams: () => [],
    async run(input, ctx) {
      const pair = pairOf(input)!;
      const [price, candles, arbitrage, sentiment] = await Promise.all([
        priceSection(reader, pair),
        candleReads(reader, pair, input.venue),
        arbitrageSection(reader, pair, VENUES, fees).then(
          (a) => ({ status: "ok" as const, ...a }),
          (err: unknown) => ({ status: "unavailable" as const, reason: failureOf(err) }),
        ),
        sentimentOf
          ? sentimentOf(pair.base, ctx.now).then(
              (s) => ({ status: "ok" as const, ...s }),
              (err: unknown) => ({ status: "unavailable" as const, reason: `sentiment engine failed: ${failureOf(err)}` }),
            )
          : Promise.resolve({ status: "unavailable" as const, reason: "no news sentiment engine is wired on this deployment" }),
      ]);
      const volatility = volatilityFrom(pair, candles.venue, candles.hourly, candles.daily);
      const history = historyFrom(pair, candles.venue, candles.daily, HISTORY_LOOKBACK);
      const answeredAt = ctx.now.toISOString();
      const used = [...new Set([...price.venues.filter((v) => v.status === "ok").map((v) => v.venue), candles.venue])];
      const quoteNote = usdtNote(used, pair.quote);
      const citations = new Citations();
      const content = markdown(pair, { price, volatility, history, arbitrage, sentiment, quoteNote, answeredAt }, citations);
      return {
        pair: pair.id,
        title: `${pair.id} market report`,
        content_markdown: content,
        price,
        volatility,
        history,
        arbitrage,
        sentiment,
        candle_venue: { venue: candles.venue, requested: input.venue, fallback_reason: candles.fallbackReason },
        sources: citations.list,
        quote_note: quoteNote,
        answered_at: answeredAt,
      };
    },
  };
}

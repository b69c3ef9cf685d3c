import { z } from "zod";
import type { FeedReader } from "../news/feed-reader.js";
import { ChannelList, FeedsBlock, MaxAgeHours, QueryBlock, TaskText, TopicText, feedsBlock, queryBlock, topicIssue } from "../news/news-deliverable.js";
import { ExcludedItem, ScanStats, scanNews } from "../news/news-scan.js";
import { ScoredStory, scoreStoriesWith } from "../news/scored-stories.js";
import { AiGenerationOut, type AiGeneration } from "../llm/ai-disclosure.js";
import { LEXICON_ENGINE, type SentimentEngine } from "../sentiment/sentiment-engine.js";
import { assetTopic, parseTopic, type TopicQuery } from "../news/topic-match.js";
import { AggregateSentiment, LABELS, TextSentiment, aggregate, labelOf } from "../sentiment/lexicon-sentiment.js";
import { THRESHOLDS, Thresholds } from "./research-topic-sentiment-analyzer.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// oracle.sentiment-analysis: the sentiment of the buyer's text(s) and/or of a crypto asset or topic in
// the curated news feeds, by the lexicon engine. Inputs:
//   text / texts   scored as given (per text and their mean);
//   asset          a ticker (BTC): news stories naming the asset (its name or ticker);
//   topic          a topic (see the news scanner's matching rules); with `asset`, both must match;
//   task           the topic, when none of the above is given.
// The overall score is the mean of the text score and the news score when both exist, else the one
// that exists. A news-only request with no matching story is refused `no_coverage` (409, not charged).
// With a language model configured, texts and stories are scored by it instead (sentiment/llm-sentiment.ts):
// `engine` is `llm` and `ai_generation` names the model.

const TICKER = /^[A-Za-z0-9]{2,10}$/;
const MAX_TEXT = 20_000;

const Input = z
  .object({
    text: z.string().trim().min(1).max(MAX_TEXT).optional(),
    texts: z.array(z.string().trim().min(1).max(MAX_TEXT)).min(1).max(50).optional(),
    asset: z.string().trim().regex(TICKER, "a ticker like BTC").toUpperCase().optional(),
    topic: TopicText.optional(),
    task: TaskText.optional(),
    channels: ChannelList.optional(),
    max_age_hours: MaxAgeHours.optional(),
  })
  .loose()
  .superRefine((v, ctx) => {
    if (v.text === undefined && v.texts === undefined && v.asset === undefined && v.topic === undefined && v.task === undefined) {
      return ctx.addIssue({ code: "custom", path: ["text"], message: "give text(s) to score, an asset, a topic, or a task naming the topic" });
    }
    if (v.topic !== undefined) {
      const issue = topicIssue(v.topic);
      if (issue) ctx.addIssue({ code: "custom", path: ["topic"], message: issue });
    } else if (v.task !== undefined && v.text === undefined && v.texts === undefined && v.asset === undefined) {
      const issue = topicIssue(v.task);
      if (issue) ctx.addIssue({ code: "custom", path: ["task"], message: issue });
    }
  });
type Input = z.infer<typeof Input>;

function textsOf(v: Input): string[] {
  return [...(v.text !== undefined ? [v.text] : []), ...(v.texts ?? [])];
}

/** The news query of a call, or undefined when it asks about the buyer's text only. */
function queryOf(v: Input): TopicQuery | undefined {
  const topicText = v.topic ?? (textsOf(v).length === 0 && v.asset === undefined ? v.task : undefined);
  const topic = topicText !== undefined ? parseTopic(topicText) : undefined;
  const asset = v.asset !== undefined ? assetTopic(v.asset) : undefined;
  if (asset && topic) {
    // Both must match: every asset alternative combined with every topic alternative.
    const alternatives = asset.alternatives.flatMap((a) => topic.alternatives.map((t) => [...new Set([...a, ...t])]));
    return { topic: `(${asset.topic}) AND (${topic.topic})`, alternatives };
  }
  return asset ?? topic;
}

export const SentimentAnalysisOutput = z.object({
  engine: z.string(),
  thresholds: Thresholds,
  subject: z.object({ asset: z.string().nullable(), topic: z.string().nullable(), texts: z.number().int() }),
  text: z
    .object({
      sentiment: AggregateSentiment,
      texts: z.array(TextSentiment.extend({ index: z.number().int(), chars: z.number().int() })),
    })
    .nullable(),
  news: z
    .object({
      query: QueryBlock,
      sentiment: AggregateSentiment,
      items: z.array(ScoredStory),
      stats: ScanStats,
      feeds: FeedsBlock,
      excluded: z.array(ExcludedItem),
    })
    .nullable(),
  overall: z.object({ normalized_score: z.number(), label: z.enum(LABELS), basis: z.enum(["text", "news", "text_and_news"]) }),
  ai_generation: AiGenerationOut.nullable().describe("set when a language model scored the texts or stories"),
  answered_at: z.string(),
});

export function oracleSentimentAnalysis(reader: FeedReader, engine: SentimentEngine = LEXICON_ENGINE): SkuHandler<Input> {
  return {
    skuId: "oracle.sentiment-analysis",
    poweredBy: engine.poweredBy,
    input: Input,
    output: SentimentAnalysisOutput,
    upstreams: () => (engine.upstream ? [engine.upstream] : []),
    async run(input, ctx) {
      const texts = textsOf(input);
      const disclosures: AiGeneration[] = [];
      let text: z.infer<typeof SentimentAnalysisOutput>["text"] = null;
      if (texts.length) {
        const run = await engine.score(texts, { accountTo: ctx.paymentId });
        if (run.ai) disclosures.push(run.ai);
        const scored = texts.map((t, index) => ({ index, chars: t.length, ...run.scores[index]! }));
        text = { sentiment: aggregate(scored), texts: scored };
      }

      const q = queryOf(input);
      let news: z.infer<typeof SentimentAnalysisOutput>["news"] = null;
      if (q) {
        const scan = await scanNews(reader, q, { channels: input.channels, maxAgeHours: input.max_age_hours, now: ctx.now });
        if (scan.stories.length === 0 && !text) throw new SkuRefusal("no_coverage", `no story in the ${scan.stats.feeds_read} feeds read matches "${q.topic}"; nothing to score`);
        const run = await scoreStoriesWith(engine, scan.stories, { accountTo: ctx.paymentId, about: q.topic });
        if (run.ai) disclosures.push(run.ai);
        const items = run.scored.map((s) => s.scored);
        news = { query: queryBlock(q), sentiment: aggregate(items.map((i) => i.sentiment)), items, stats: scan.stats, feeds: feedsBlock(scan), excluded: scan.excluded };
      }

      const parts = [text?.sentiment.normalized_score, news?.sentiment.normalized_score].filter((n): n is number => typeof n === "number");
      const score = Math.round((parts.reduce((a, b) => a + b, 0) / parts.length) * 10_000) / 10_000 || 0;
      const basis = text && news?.sentiment.count ? "text_and_news" : text ? "text" : "news";
      return {
        engine: engine.name,
        thresholds: THRESHOLDS,
        subject: { asset: input.asset ?? null, topic: q?.topic ?? null, texts: texts.length },
        text,
        news,
        overall: { normalized_score: score, label: labelOf(score), basis },
        ai_generation: disclosures.length ? { ...disclosures[0]!, repaired: disclosures.some((d) => d.repaired) } : null,
        answered_at: ctx.now.toISOString(),
      };
    },
  };
}

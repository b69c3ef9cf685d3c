import { z } from "zod";
import type { FeedReader } from "../news/feed-reader.js";
import { ChannelList, FeedsBlock, MaxAgeHours, QueryBlock, TOPIC_MATCHING, TaskText, TopicText, feedsBlock, feedsMarkdown, queryBlock, requireTopic, scanTopic } from "../news/news-deliverable.js";
import { ExcludedItem, ScanStats } from "../news/news-scan.js";
import { ChannelSentiment, byChannel, scoreStoriesWith } from "../news/scored-stories.js";
import { AiGenerationOut } from "../llm/ai-disclosure.js";
import { LEXICON_ENGINE, type SentimentEngine } from "../sentiment/sentiment-engine.js";
import { AggregateSentiment, NEGATIVE_THRESHOLD, POSITIVE_THRESHOLD, aggregate } from "../sentiment/lexicon-sentiment.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// research.topic-sentiment-analyzer: the sentiment of a topic per channel (the curated feeds'
// channels: general, business, tech, crypto), from the stories the news scan finds, each story scored
// by the lexicon engine; per channel the item count, the mean normalized score, its label and the
// stories behind it. No matching story at all means there is nothing to score: refused with
// `no_coverage` (409, not charged). Every feed failing fails the call (503, not charged).
// With a language model configured, the stories are scored by it instead (sentiment/llm-sentiment.ts):
// `engine` is `llm` and `ai_generation` names the model.

const Input = z
  .object({
    topic: TopicText.optional(),
    task: TaskText.optional(),
    channels: ChannelList.optional(),
    max_age_hours: MaxAgeHours.optional(),
  })
  .loose()
  .superRefine(requireTopic);
type Input = z.infer<typeof Input>;

export const Thresholds = z.object({ positive_at_or_above: z.number(), negative_at_or_below: z.number() });
export const THRESHOLDS = { positive_at_or_above: POSITIVE_THRESHOLD, negative_at_or_below: NEGATIVE_THRESHOLD };

export const TopicSentimentOutput = z.object({
  topic: z.string(),
  query: QueryBlock,
  matching: z.string(),
  engine: z.string(),
  thresholds: Thresholds,
  overall: AggregateSentiment,
  channels: z.array(ChannelSentiment),
  stats: ScanStats,
  feeds: FeedsBlock,
  excluded: z.array(ExcludedItem),
  content_markdown: z.string(),
  ai_generation: AiGenerationOut.nullable().describe("set when a language model scored the stories"),
  answered_at: z.string(),
});

const fmt = (n: number | null) => (n === null ? "n/a" : n.toFixed(3));

export function researchTopicSentimentAnalyzer(reader: FeedReader, engine: SentimentEngine = LEXICON_ENGINE): SkuHandler<Input> {
  return {
    skuId: "research.topic-sentiment-analyzer",
    poweredBy: engine.poweredBy,
    input: Input,
    output: TopicSentimentOutput,
    upstreams: () => (engine.upstream ? [engine.upstream] : []),
    async run(input, ctx) {
      const { q, channels, scan } = await scanTopic(reader, input, ctx.now);
      if (scan.stories.length === 0) throw new SkuRefusal("no_coverage", `no story in the ${scan.stats.feeds_read} feeds read matches "${q.topic}"; nothing to score`);
      const { scored, ai } = await scoreStoriesWith(engine, scan.stories, { accountTo: ctx.paymentId, about: q.topic });
      const perChannel = byChannel(scored, channels, scan.feeds);
      const overall = aggregate(scored.map((s) => s.scored.sentiment));
      const markdown = [
        `# Sentiment on "${q.topic}"`,
        "",
        `Overall: ${overall.label} (${fmt(overall.normalized_score)}) over ${overall.count} stories.`,
        "",
        "| Channel | Stories | Score | Label | +/=/- |",
        "|---|---|---|---|---|",
        ...perChannel.map((c) => `| ${c.channel} | ${c.item_count} | ${fmt(c.sentiment.normalized_score)} | ${c.sentiment.label ?? "no data"} | ${c.sentiment.counts.positive}/${c.sentiment.counts.neutral}/${c.sentiment.counts.negative} |`),
        "",
        `Engine: ${ai ? `${engine.name} (${ai.model}, AI-generated labels)` : engine.name}; positive at or above ${POSITIVE_THRESHOLD}, negative at or below ${NEGATIVE_THRESHOLD}.`,
        ...feedsMarkdown(scan),
      ].join("\n");
      return {
        topic: q.topic,
        query: queryBlock(q),
        matching: TOPIC_MATCHING,
        engine: engine.name,
        thresholds: THRESHOLDS,
        overall,
        channels: perChannel,
        stats: scan.stats,
        feeds: feedsBlock(scan),
        excluded: scan.excluded,
        content_markdown: markdown,
        ai_generation: ai,
        answered_at: ctx.now.toISOString(),
      };
    },
  };
}

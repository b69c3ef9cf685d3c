import { z } from "zod";
import { AggregateSentiment, ENGINE_NAME, LABELS, aggregate, type AggregateSentiment as Aggregate } from "../sentiment/lexicon-sentiment.js";
import type { Channel } from "./feed-config.js";
import type { FeedReader } from "./feed-reader.js";
import { scanNews, type NewsScan } from "./news-scan.js";
import { scoreStories, type ScoredStory } from "./scored-stories.js";
import { assetTopic } from "./topic-match.js";

// The news sentiment of one crypto asset (stories naming it or its ticker in the curated feeds, each
// scored by the lexicon engine), as the market engines use it. Every feed failing throws (the caller
// fails its call); no story is a result (count 0, label null).

export interface AssetSentiment {
  asset: string;
  scan: NewsScan;
  stories: ScoredStory[];
  sentiment: Aggregate;
}

export async function assetSentiment(reader: FeedReader, asset: string, o: { channels?: readonly Channel[]; now: Date }): Promise<AssetSentiment> {
  const scan = await scanNews(reader, assetTopic(asset), { channels: o.channels, now: o.now });
  const stories = scoreStories(scan.stories).map((s) => s.scored);
  return { asset, scan, stories, sentiment: aggregate(stories.map((s) => s.sentiment)) };
}

/** A short citation of the headlines behind a score (the newest `max`). */
export const Headline = z.object({
  title: z.string(),
  url: z.string().nullable(),
  published_at: z.string().nullable(),
  label: z.enum(LABELS),
  normalized_score: z.number(),
  source: z.object({ name: z.string(), domain: z.string(), feed_url: z.string(), fetched_at: z.string(), cached: z.boolean() }),
});

export const NewsSentimentBlock = z.object({
  engine: z.string(),
  query: z.string(),
  label: z.enum(LABELS).nullable(),
  normalized_score: z.number().nullable(),
  stories: z.number().int(),
  counts: AggregateSentiment.shape.counts,
  headlines: z.array(Headline),
  feeds_read: z.number().int(),
  feeds_failed: z.array(z.object({ domain: z.string(), feed_url: z.string(), error: z.string().nullable() })),
});
export type NewsSentimentBlock = z.infer<typeof NewsSentimentBlock>;

export function newsSentimentBlock(s: AssetSentiment, maxHeadlines = 10): NewsSentimentBlock {
  return {
    engine: ENGINE_NAME,
    query: assetTopic(s.asset).topic,
    label: s.sentiment.label,
    normalized_score: s.sentiment.normalized_score,
    stories: s.sentiment.count,
    counts: s.sentiment.counts,
    headlines: s.stories.slice(0, maxHeadlines).map((h) => ({
      title: h.title,
      url: h.url,
      published_at: h.published_at,
      label: h.sentiment.label,
      normalized_score: h.sentiment.normalized_score,
      source: { name: h.source.name, domain: h.source.domain, feed_url: h.source.feed_url, fetched_at: h.source.fetched_at, cached: h.source.cached },
    })),
    feeds_read: s.scan.stats.feeds_read,
    feeds_failed: s.scan.feeds.filter((f) => !f.ok).map((f) => ({ domain: f.domain, feed_url: f.feed_url, error: f.error })),
  };
}

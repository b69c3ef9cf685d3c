import { z } from "zod";
import { AggregateSentiment, TextSentiment, aggregate, analyzeText } from "../sentiment/lexicon-sentiment.js";
import { CHANNELS, type Channel } from "./feed-config.js";
import { ItemSource, type NewsItem } from "./news-scan.js";
import type { SentimentEngine } from "../sentiment/sentiment-engine.js";
import type { AiGeneration } from "../llm/ai-disclosure.js";

// News stories with their lexicon sentiment (scored on "title. summary"), and the per-channel view: a
// story counts in every channel whose outlets carried it (its source's and its copies'), so "what the
// crypto press says" includes a story the business press broke too; the overall score counts each
// story once.

export const ScoredStory = z.object({
  title: z.string(),
  url: z.string().nullable(),
  published_at: z.string().nullable(),
  source: ItemSource,
  also_reported_by: z.array(z.string()),
  sentiment: TextSentiment,
});
export type ScoredStory = z.infer<typeof ScoredStory>;

export const ChannelSentiment = z.object({
  channel: z.enum(CHANNELS),
  feeds_read: z.number().int(),
  feeds_failed: z.number().int(),
  item_count: z.number().int(),
  sentiment: AggregateSentiment,
  items: z.array(ScoredStory),
});
export type ChannelSentiment = z.infer<typeof ChannelSentiment>;

const storyText = (story: NewsItem) => (story.summary ? `${story.title}. ${story.summary}` : story.title);

/** The stories scored by a sentiment engine (the lexicon or the language model), with its disclosure. */
export async function scoreStoriesWith(engine: SentimentEngine, stories: readonly NewsItem[], o: { accountTo: string; about?: string }): Promise<{ scored: { story: NewsItem; scored: ScoredStory }[]; ai: AiGeneration | null }> {
  const run = await engine.score(stories.map(storyText), o);
  return {
    scored: stories.map((story, i) => ({
      story,
      scored: { title: story.title, url: story.url, published_at: story.published_at, source: story.source, also_reported_by: [...new Set(story.also_reported_by.map((a) => a.domain))], sentiment: run.scores[i]! },
    })),
    ai: run.ai,
  };
}

export function scoreStories(stories: readonly NewsItem[]): { story: NewsItem; scored: ScoredStory }[] {
  return stories.map((story) => ({
    story,
    scored: {
      title: story.title,
      url: story.url,
      published_at: story.published_at,
      source: story.source,
      also_reported_by: [...new Set(story.also_reported_by.map((a) => a.domain))],
      sentiment: analyzeText(storyText(story)),
    },
  }));
}

export function byChannel(
  scored: readonly { story: NewsItem; scored: ScoredStory }[],
  channels: readonly Channel[],
  feeds: readonly { channel: Channel; ok: boolean }[],
): ChannelSentiment[] {
  return channels.map((channel) => {
    const items = scored.filter(({ story }) => story.source.channel === channel || story.also_reported_by.some((a) => a.channel === channel)).map((s) => s.scored);
    const mine = feeds.filter((f) => f.channel === channel);
    return {
      channel,
      feeds_read: mine.filter((f) => f.ok).length,
      feeds_failed: mine.filter((f) => !f.ok).length,
      item_count: items.length,
      sentiment: aggregate(items.map((i) => i.sentiment)),
      items,
    };
  });
}

import { assetSentiment, newsSentimentBlock } from "../news/asset-sentiment.js";
import type { FeedReader } from "../news/feed-reader.js";
import type { SentimentProvider } from "./oracle-comprehensive-report.js";

// The news sentiment of oracle.comprehensive-report: stories naming the asset (its name or ticker) in
// the curated crypto and business feeds (the news engines' feeds file), each scored by the lexicon
// engine (news/asset-sentiment.ts); the section reports their mean and the five newest headlines with
// the feed each came from. Every feed failing fails the section only, not the report.

export const SENTIMENT_CHANNELS = ["crypto", "business"] as const;
const HEADLINES = 5;

export function newsSentiment(reader: FeedReader): SentimentProvider {
  return async (asset, now) => {
    const b = newsSentimentBlock(await assetSentiment(reader, asset, { channels: SENTIMENT_CHANNELS, now }), HEADLINES);
    return {
      engine: b.engine,
      label: b.label,
      normalized_score: b.normalized_score,
      stories: b.stories,
      feeds_read: b.feeds_read,
      channels: [...SENTIMENT_CHANNELS],
      headlines: b.headlines.map((h) => ({ title: h.title, url: h.url, published_at: h.published_at, label: h.label, source: { name: h.source.name, feed_url: h.source.feed_url, fetched_at: h.source.fetched_at, cached: h.source.cached } })),
    };
  };
}

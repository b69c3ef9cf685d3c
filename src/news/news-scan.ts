import { z } from "zod";
import { scanContent } from "../trust/content-scan.js";
import { CHANNELS, type Channel, type FeedEntry } from "./feed-config.js";
import type { FeedRead, FeedReader } from "./feed-reader.js";
import { canonicalUrl, titleKey, urlKey } from "./canonical-url.js";
import { matchTopic, type TopicQuery } from "./topic-match.js";

// One news scan: read the curated feeds of the chosen channels, keep the items matching the topic,
// drop items that trip the content-trap scan (they are listed, not served), and merge duplicates:
// two items are one story when their canonical URLs agree (tracking parameters ignored) or their
// normalized titles agree (the same headline across outlets). The earliest-published copy is the
// story's source; the other copies are listed under `also_reported_by`. Stories come newest first
// (undated ones last). Failed feeds are listed; if every feed read fails the scan fails.

export const ItemSource = z.object({
  domain: z.string(),
  name: z.string(),
  channel: z.enum(CHANNELS),
  feed_url: z.string(),
  fetched_at: z.string(),
  cached: z.boolean(),
});

export const NewsItem = z.object({
  title: z.string(),
  url: z.string().nullable(),
  canonical_url: z.string().nullable(),
  published_at: z.string().nullable(),
  summary: z.string(),
  source: ItemSource,
  also_reported_by: z.array(z.object({ domain: z.string(), name: z.string(), channel: z.enum(CHANNELS), url: z.string().nullable(), feed_url: z.string() })),
  matched_terms: z.array(z.string()),
  matched_in: z.enum(["title", "title_and_summary"]),
});
export type NewsItem = z.infer<typeof NewsItem>;

export const FeedReport = z.object({
  domain: z.string(),
  name: z.string(),
  channel: z.enum(CHANNELS),
  feed_url: z.string(),
  ok: z.boolean(),
  format: z.enum(["rss2", "atom", "rdf"]).nullable(),
  item_count: z.number().int(),
  fetched_at: z.string(),
  cached: z.boolean(),
  error: z.string().nullable(),
});
export type FeedReport = z.infer<typeof FeedReport>;

export const ScanStats = z.object({
  feeds_read: z.number().int(),
  feeds_failed: z.number().int(),
  items_read: z.number().int(),
  items_matched: z.number().int(),
  duplicates_merged: z.number().int(),
  stories: z.number().int(),
});

export const ExcludedItem = z.object({ domain: z.string(), title: z.string(), url: z.string().nullable(), rules: z.array(z.string()) });

export interface NewsScan {
  stories: NewsItem[];
  feeds: FeedReport[];
  excluded: z.infer<typeof ExcludedItem>[];
  stats: z.infer<typeof ScanStats>;
}

export class AllFeedsFailed extends Error {}

const SUMMARY_CHARS = 500;

function report(r: FeedRead): FeedReport {
  const base = { domain: r.feed.domain, name: r.feed.name, channel: r.feed.channel, feed_url: r.feed.url, fetched_at: r.fetchedAt.toISOString() };
  return r.ok
    ? { ...base, ok: true, format: r.format, item_count: r.items.length, cached: r.cached, error: null }
    : { ...base, ok: false, format: null, item_count: 0, cached: false, error: r.error };
}

/** The feeds of the given channels (all channels when none are given). */
export function feedsOf(reader: FeedReader, channels?: readonly Channel[]): FeedEntry[] {
  return channels?.length ? reader.feeds.filter((f) => channels.includes(f.channel)) : [...reader.feeds];
}

export async function scanNews(reader: FeedReader, q: TopicQuery, o: { channels?: readonly Channel[]; maxAgeHours?: number; now: Date }): Promise<NewsScan> {
  const feeds = feedsOf(reader, o.channels);
  const reads = await reader.readAll(feeds);
  const ok = reads.filter((r): r is Extract<FeedRead, { ok: true }> => r.ok);
  if (ok.length === 0) throw new AllFeedsFailed(`every news feed failed (${reads.length}): ${reads.map((r) => `${r.feed.domain}: ${(r as { error: string }).error}`).slice(0, 5).join("; ")}`);
  const oldest = o.maxAgeHours === undefined ? undefined : o.now.getTime() - o.maxAgeHours * 3_600_000;

  const excluded: NewsScan["excluded"] = [];
  const candidates: (NewsItem & { order: number })[] = [];
  let itemsRead = 0;
  for (const r of ok) {
    itemsRead += r.items.length;
    for (const it of r.items) {
      const m = matchTopic(q, it.title, it.summary);
      if (!m) continue;
      if (oldest !== undefined && it.published && Date.parse(it.published) < oldest) continue;
      const rules = scanContent([it.title, it.rawSummary, it.link ?? ""]);
      if (rules.length) {
        excluded.push({ domain: r.feed.domain, title: it.title, url: it.link, rules });
        continue;
      }
      const summary = it.summary.length > SUMMARY_CHARS ? `${it.summary.slice(0, SUMMARY_CHARS - 1).trimEnd()}…` : it.summary;
      candidates.push({
        title: it.title,
        url: it.link,
        canonical_url: it.link ? canonicalUrl(it.link) : null,
        published_at: it.published,
        summary,
        source: { domain: r.feed.domain, name: r.feed.name, channel: r.feed.channel, feed_url: r.feed.url, fetched_at: r.fetchedAt.toISOString(), cached: r.cached },
        also_reported_by: [],
        matched_terms: m.terms,
        matched_in: m.matched_in,
        order: candidates.length,
      });
    }
  }

  // Earliest copy first, so it becomes the story's source; undated copies after dated ones.
  const time = (i: { published_at: string | null }) => (i.published_at ? Date.parse(i.published_at) : Number.POSITIVE_INFINITY);
  candidates.sort((a, b) => time(a) - time(b) || a.order - b.order);
  const byUrl = new Map<string, NewsItem & { order: number }>();
  const byTitle = new Map<string, NewsItem & { order: number }>();
  const stories: (NewsItem & { order: number })[] = [];
  for (const c of candidates) {
    const uk = c.url ? urlKey(c.url) : undefined;
    const tk = titleKey(c.title);
    const story = (uk && byUrl.get(uk)) || (tk && byTitle.get(tk));
    if (story) {
      story.also_reported_by.push({ domain: c.source.domain, name: c.source.name, channel: c.source.channel, url: c.url, feed_url: c.source.feed_url });
    } else {
      stories.push(c);
    }
    const target = story || c;
    if (uk && !byUrl.has(uk)) byUrl.set(uk, target);
    if (tk && !byTitle.has(tk)) byTitle.set(tk, target);
  }
  const newest = (i: { published_at: string | null }) => (i.published_at ? Date.parse(i.published_at) : Number.NEGATIVE_INFINITY);
  stories.sort((a, b) => newest(b) - newest(a) || a.order - b.order);
  return {
    stories: stories.map(({ order: _order, ...s }) => s),
    feeds: reads.map(report),
    excluded,
    stats: {
      feeds_read: ok.length,
      feeds_failed: reads.length - ok.length,
      items_read: itemsRead,
      items_matched: candidates.length,
      duplicates_merged: candidates.length - stories.length,
      stories: stories.length,
    },
  };
}

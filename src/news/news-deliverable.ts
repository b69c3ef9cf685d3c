import { z } from "zod";
import { CHANNELS, type Channel } from "./feed-config.js";
import type { FeedReader } from "./feed-reader.js";
import { FeedReport, scanNews, type NewsItem, type NewsScan } from "./news-scan.js";
import { parseTopic, type TopicQuery } from "./topic-match.js";

// Pieces the news and sentiment engines share: the topic, task, channel and age input fields, the
// topic scan, the feeds block (read and failed) and a Markdown rendering of stories.

export const TopicText = z.string().trim().min(1).max(200);
export const TaskText = z.string().trim().min(1).max(4096);
export const ChannelList = z.array(z.enum(CHANNELS)).min(1).max(CHANNELS.length);
export const MaxAgeHours = z.number().positive().max(24 * 30);

/** A topic that leaves at least one searchable word; the issue is reported on `path`. */
export function topicIssue(topic: string | undefined): string | undefined {
  if (topic === undefined) return undefined;
  return parseTopic(topic).alternatives.length ? undefined : "the topic has no searchable word (only common words)";
}

/** The refinement of a topic engine's input: a topic (`topic`, else the task text) with a searchable word. */
export function requireTopic(v: { topic?: string; task?: string }, ctx: z.RefinementCtx): void {
  const topic = v.topic ?? v.task;
  if (topic === undefined) return void ctx.addIssue({ code: "custom", path: ["topic"], message: "a topic is required (topic, or the task text)" });
  const issue = topicIssue(topic);
  if (issue) ctx.addIssue({ code: "custom", path: [v.topic !== undefined ? "topic" : "task"], message: issue });
}

/** The scan a topic engine runs: its topic (`topic`, else the task text) over the channels asked for (all by default). */
export async function scanTopic(
  reader: FeedReader,
  input: { topic?: string; task?: string; channels?: Channel[]; max_age_hours?: number },
  now: Date,
): Promise<{ q: TopicQuery; channels: Channel[]; scan: NewsScan }> {
  const q = parseTopic((input.topic ?? input.task)!);
  const channels = input.channels ?? [...CHANNELS];
  return { q, channels, scan: await scanNews(reader, q, { channels, maxAgeHours: input.max_age_hours, now }) };
}

export const FeedsBlock = z.object({ read: z.array(FeedReport), failed: z.array(FeedReport) });

export function feedsBlock(scan: NewsScan): z.infer<typeof FeedsBlock> {
  return { read: scan.feeds.filter((f) => f.ok), failed: scan.feeds.filter((f) => !f.ok) };
}

export const QueryBlock = z.object({ topic: z.string(), alternatives: z.array(z.array(z.string())) });

export function queryBlock(q: TopicQuery): z.infer<typeof QueryBlock> {
  return { topic: q.topic, alternatives: q.alternatives };
}

export const TOPIC_MATCHING =
  "An item matches when, for any OR-separated alternative of the topic, every term (a word, or a quoted phrase) occurs as a whole word in its title or summary; case, accents and punctuation are ignored, a plural -s/-es matches, common words are not terms. Duplicates (same canonical URL without tracking parameters, or the same normalized title across outlets) are merged into one story attributed to its earliest copy.";

const md = (s: string) => s.replace(/([\\`*_[\]<>])/g, "\\$1");

/** One Markdown line per story: linked title, outlet, date, and an optional suffix (a sentiment). */
export function storyLines(stories: readonly NewsItem[], suffix: (s: NewsItem, i: number) => string = () => ""): string[] {
  return stories.map((s, i) => {
    const title = s.url ? `[${md(s.title)}](${s.url})` : md(s.title);
    const also = s.also_reported_by.length ? `; also ${[...new Set(s.also_reported_by.map((a) => a.domain))].join(", ")}` : "";
    return `${i + 1}. ${title} (${s.source.name}, ${s.source.domain}, ${s.published_at ?? "undated"}${also})${suffix(s, i)}`;
  });
}

export function feedsMarkdown(scan: NewsScan): string[] {
  const failed = scan.feeds.filter((f) => !f.ok);
  const lines = [`Feeds read: ${scan.stats.feeds_read}; failed: ${scan.stats.feeds_failed}.`];
  for (const f of failed) lines.push(`- failed: ${f.domain} (${f.feed_url}): ${f.error}`);
  return lines;
}

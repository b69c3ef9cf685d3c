import { z } from "zod";
import { CHANNELS } from "../news/feed-config.js";
import type { FeedReader } from "../news/feed-reader.js";
import { ChannelList, FeedsBlock, QueryBlock, TOPIC_MATCHING, TopicText, feedsBlock, feedsMarkdown, queryBlock, storyLines, topicIssue } from "../news/news-deliverable.js";
import { ExcludedItem, NewsItem, ScanStats, scanNews } from "../news/news-scan.js";
import { parseTopic } from "../news/topic-match.js";
import type { SkuHandler } from "./sku-handler.js";

// research.topic-news-scanner: the stories on a topic from the curated outlets' feeds (44+ domains,
// config/news-feeds.yaml), newest first, each attributed to its outlet, feed and fetch time, duplicates
// merged, with the list of feeds read and failed. A scan where no story matches is still a scan (an
// empty list, charged); a scan where every feed fails fails the call (503, not charged).

const Input = z
  .object({
    topic: TopicText.optional(),
    task: z.string().trim().min(1).max(4096).optional(),
    channels: ChannelList.optional(),
    limit: z.number().int().min(1).max(100).default(25),
    max_age_hours: z.number().positive().max(24 * 30).optional(),
  })
  .loose()
  .superRefine((v, ctx) => {
    const topic = v.topic ?? v.task;
    if (topic === undefined) return ctx.addIssue({ code: "custom", path: ["topic"], message: "a topic is required (topic, or the task text)" });
    const issue = topicIssue(topic);
    if (issue) ctx.addIssue({ code: "custom", path: [v.topic !== undefined ? "topic" : "task"], message: issue });
  });
type Input = z.infer<typeof Input>;

export const NewsScannerOutput = z.object({
  topic: z.string(),
  query: QueryBlock,
  matching: z.string(),
  channels: z.array(z.enum(CHANNELS)),
  items: z.array(NewsItem),
  total_stories: z.number().int(),
  returned: z.number().int(),
  stats: ScanStats,
  feeds: FeedsBlock,
  excluded: z.array(ExcludedItem),
  content_markdown: z.string(),
  answered_at: z.string(),
});

export function researchTopicNewsScanner(reader: FeedReader): SkuHandler<Input> {
  return {
    skuId: "research.topic-news-scanner",
    poweredBy: "svc-news/curated-feeds",
    input: Input,
    output: NewsScannerOutput,
    async run(input, ctx) {
      const q = parseTopic((input.topic ?? input.task)!);
      const channels = input.channels ?? [...CHANNELS];
      const scan = await scanNews(reader, q, { channels, maxAgeHours: input.max_age_hours, now: ctx.now });
      const items = scan.stories.slice(0, input.limit);
      const markdown = [
        `# News on "${q.topic}"`,
        "",
        items.length ? `${items.length} of ${scan.stories.length} stories, newest first:` : "No story in the curated feeds matches this topic.",
        "",
        ...storyLines(items),
        "",
        ...feedsMarkdown(scan),
      ].join("\n");
      return {
        topic: q.topic,
        query: queryBlock(q),
        matching: TOPIC_MATCHING,
        channels,
        items,
        total_stories: scan.stories.length,
        returned: items.length,
        stats: scan.stats,
        feeds: feedsBlock(scan),
        excluded: scan.excluded,
        content_markdown: markdown,
        answered_at: ctx.now.toISOString(),
      };
    },
  };
}

import { z } from "zod";
import { CHANNELS } from "../news/feed-config.js";
import type { FeedReader } from "../news/feed-reader.js";
import { ChannelList, FeedsBlock, MaxAgeHours, QueryBlock, TOPIC_MATCHING, TaskText, TopicText, feedsBlock, feedsMarkdown, queryBlock, requireTopic, scanTopic, storyLines } from "../news/news-deliverable.js";
import { ExcludedItem, NewsItem, ScanStats } from "../news/news-scan.js";
import type { SkuHandler } from "./sku-handler.js";

// research.topic-news-scanner: the stories on a topic from the curated outlets' feeds (44+ domains,
// config/news-feeds.yaml), newest first, each attributed to its outlet, feed and fetch time, duplicates
// merged, with the list of feeds read and failed. A scan where no story matches is still a scan (an
// empty list, charged); a scan where every feed fails fails the call (503, not charged).

const Input = z
  .object({
    topic: TopicText.optional(),
    task: TaskText.optional(),
    channels: ChannelList.optional(),
    limit: z.number().int().min(1).max(100).default(25),
    max_age_hours: MaxAgeHours.optional(),
  })
  .loose()
  .superRefine(requireTopic);
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
      const { q, channels, scan } = await scanTopic(reader, input, ctx.now);
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

import fs from "node:fs";
import { parse } from "yaml";
import { z } from "zod";

// The curated news feeds (config/news-feeds.yaml, or the file NEWS_FEEDS_FILE names): each outlet's
// domain, name, channel (general, business, tech or crypto) and its public RSS/Atom/RDF feed URL.
// Validated once at start; a bad file stops the server with the offending entries named.

export const CHANNELS = ["general", "business", "tech", "crypto"] as const;
export type Channel = (typeof CHANNELS)[number];

/** The shipped list must cover at least this many distinct outlet domains (the catalog promises 44). */
export const MIN_CURATED_DOMAINS = 44;

const DOMAIN = /^(?=.{3,253}$)([a-z0-9-]+\.)+[a-z0-9-]+$/;

export const FeedEntry = z
  .object({
    domain: z.string().regex(DOMAIN, "a lower-case domain like bbc.co.uk"),
    name: z.string().min(1).max(120),
    channel: z.enum(CHANNELS),
    url: z.url({ protocol: /^https?$/ }),
  })
  .strict();
export type FeedEntry = z.infer<typeof FeedEntry>;

const FeedsFile = z.object({ feeds: z.array(FeedEntry).min(1) }).strict();

export class FeedConfigError extends Error {}

export function parseFeeds(text: string, source = "news feeds"): FeedEntry[] {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new FeedConfigError(`${source} is not valid YAML: ${(err as Error).message}`);
  }
  const parsed = FeedsFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new FeedConfigError(`${source} is invalid:\n${lines.join("\n")}`);
  }
  const seen = new Set<string>();
  for (const f of parsed.data.feeds) {
    if (seen.has(f.url)) throw new FeedConfigError(`${source}: feed ${f.url} is listed twice`);
    seen.add(f.url);
  }
  return parsed.data.feeds;
}

export function loadFeeds(file: string): FeedEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new FeedConfigError(`cannot read the news feeds file ${file}: ${(err as Error).message}`);
  }
  return parseFeeds(text, file);
}

/** The distinct outlet domains of a list. */
export function domainsOf(feeds: readonly FeedEntry[]): string[] {
  return [...new Set(feeds.map((f) => f.domain))];
}

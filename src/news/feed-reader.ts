import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { FeedEntry } from "./feed-config.js";
import { parseFeed, type FeedFormat, type FeedItem } from "./feed-parser.js";

// Reads the curated feeds through the safe fetcher: each feed within its own deadline (redirects
// followed and re-checked per hop, the whole exchange bounded), a bounded body size, several feeds at
// a time up to a concurrency bound. A feed read successfully is reused for a few minutes (news does
// not move faster than that, and outlets ask readers not to poll harder); a failure is not cached, so
// the next call tries again. Concurrent calls needing the same feed share one request.

export interface FeedReaderOptions {
  timeoutMs: number;
  maxBytes: number;
  cacheMs: number;
  concurrency: number;
  userAgent: string;
}

const MAX_REDIRECTS = 5;
// The safe fetcher silently stops at its byte cap (the chunk crossing it is dropped). Reading up to one
// socket chunk (64 KiB) more than the limit makes an oversized feed always come back longer than the
// limit, so it is reported as too large rather than as malformed XML.
const READ_SLACK = 64 * 1024 + 1;

export type FeedRead =
  | { ok: true; feed: FeedEntry; fetchedAt: Date; cached: boolean; format: FeedFormat; finalUrl: string; items: FeedItem[] }
  | { ok: false; feed: FeedEntry; fetchedAt: Date; error: string };

type Fetched = { fetchedAt: Date; format: FeedFormat; finalUrl: string; items: FeedItem[] };

export class FeedReader {
  private readonly cache = new Map<string, Fetched>();
  private readonly inflight = new Map<string, Promise<Fetched>>();

  constructor(
    readonly feeds: readonly FeedEntry[],
    private readonly policy: SafeFetchPolicy,
    readonly options: FeedReaderOptions,
  ) {}

  /** Reads every feed given (in parallel, bounded); never throws: failures are reported per feed. */
  async readAll(feeds: readonly FeedEntry[]): Promise<FeedRead[]> {
    const out: FeedRead[] = new Array(feeds.length);
    let next = 0;
    const worker = async () => {
      while (next < feeds.length) {
        const i = next++;
        out[i] = await this.read(feeds[i]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, feeds.length) }, worker));
    return out;
  }

  async read(feed: FeedEntry): Promise<FeedRead> {
    const hit = this.cache.get(feed.url);
    if (hit && Date.now() - hit.fetchedAt.getTime() < this.options.cacheMs) return { ok: true, feed, cached: true, ...hit };
    let pending = this.inflight.get(feed.url);
    if (!pending) {
      pending = this.fetchFeed(feed.url).finally(() => this.inflight.delete(feed.url));
      this.inflight.set(feed.url, pending);
    }
    try {
      const fetched = await pending;
      this.cache.set(feed.url, fetched);
      return { ok: true, feed, cached: false, ...fetched };
    } catch (err) {
      return { ok: false, feed, fetchedAt: new Date(), error: (err as Error).message };
    }
  }

  private fetchFeed(url: string): Promise<Fetched> {
    const { timeoutMs } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.fetchAndParse(url), deadline]).finally(() => clearTimeout(timer));
  }

  private async fetchAndParse(start: string): Promise<Fetched> {
    const { timeoutMs, maxBytes, userAgent } = this.options;
    let url = start;
    for (let hop = 0; ; hop++) {
      const res = await safeRequest(url, { method: "GET", timeoutMs, maxBytes: maxBytes + READ_SLACK, headers: { "user-agent": userAgent, accept: "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5" } }, this.policy);
      const location = res.status >= 300 && res.status < 400 ? String(res.headers.location ?? "") : "";
      if (location) {
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        url = new URL(location, url).toString();
        continue;
      }
      if (res.status === 429) throw new Error(`rate limited (HTTP 429${res.headers["retry-after"] ? `, retry after ${String(res.headers["retry-after"])}` : ""})`);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const declared = Number(res.headers["content-length"] ?? NaN);
      if (declared > maxBytes || Buffer.byteLength(res.body) > maxBytes) throw new Error(`feed larger than ${maxBytes} bytes`);
      const parsed = parseFeed(res.body, url);
      return { fetchedAt: new Date(), format: parsed.format, finalUrl: url, items: parsed.items };
    }
  }
}

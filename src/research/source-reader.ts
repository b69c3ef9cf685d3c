import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { readMainContent } from "../web/main-content.js";
import { fetchPage } from "../web/page-fetch.js";
import { scanPage } from "../web/page-scan.js";
import { passagesOf, type SourceText } from "./passages.js";

// Reads the buyer's sources for the research brief, each on its own: a source that cannot be fetched
// or has no readable content is `failed`, a page that trips the content-trap scan (anywhere, hidden
// text and comments included) is `excluded` with the matched rules and never quoted; the rest are
// `used`. Only the given URLs (and their redirects) are fetched.

export const SOURCE_TIMEOUT_MS = 10_000;
export const SOURCE_MAX_BYTES = 2 * 1024 * 1024;

interface Common {
  /** 1-based position in `urls`. */
  n: number;
  url: string;
  fetched_at: string;
}

export type SourceOutcome =
  | (Common & { status: "used"; final_url: string; title: string | null; status_code: number; redirects: number; content: SourceText })
  | (Common & { status: "excluded"; final_url: string; status_code: number; matched_rules: string[] })
  | (Common & { status: "failed"; error: string });

async function readOne(n: number, url: string, policy: SafeFetchPolicy): Promise<SourceOutcome> {
  const at = () => new Date().toISOString();
  let page;
  try {
    page = await fetchPage(url, policy, { timeoutMs: SOURCE_TIMEOUT_MS, maxBytes: SOURCE_MAX_BYTES, userAgent: "svc-deep-researcher/1.0" });
  } catch (err) {
    return { n, url, fetched_at: at(), status: "failed", error: (err as Error).message };
  }
  const base = { n, url, fetched_at: page.fetchedAt.toISOString(), final_url: page.finalUrl, status_code: page.status };
  const rules = scanPage(page.body);
  if (rules.length) return { ...base, status: "excluded", matched_rules: rules };
  const article = readMainContent(page.body);
  const content = article ? passagesOf(article.html) : undefined;
  if (!article || !content?.passages.length) return { n, url, fetched_at: base.fetched_at, status: "failed", error: `${url} has no readable main content` };
  return { ...base, status: "used", title: article.title, redirects: page.hops.length - 1, content };
}

/** Reads every source concurrently; the outcomes come back in `urls` order. */
export function readSources(urls: readonly string[], policy: SafeFetchPolicy): Promise<SourceOutcome[]> {
  return Promise.all(urls.map((u, i) => readOne(i + 1, u, policy)));
}

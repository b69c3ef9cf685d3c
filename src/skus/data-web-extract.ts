import { z } from "zod";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { fetchPage } from "../web/page-fetch.js";
import { readMainContent } from "../web/main-content.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";
import { scanPage } from "../web/page-scan.js";
import { singleTargetInput, targetOf, type SingleTargetInput } from "../web/single-target.js";
import { Iso } from "./output-shapes.js";

// data.web-extract: the main content of one buyer-supplied URL, as Firefox Reader View extracts it
// (@mozilla/readability over a linkedom DOM), converted to Markdown (turndown). Fetched through the
// safe fetcher, redirects re-checked per hop. A page that cannot be fetched or has no readable content
// fails the call, so nothing is charged.

const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

const Output = z.object({
  url: z.string(),
  final_url: z.string(),
  title: z.string().nullable(),
  byline: z.string().nullable(),
  site_name: z.string().nullable(),
  published_time: z.string().nullable(),
  excerpt: z.string().nullable(),
  content_markdown: z.string(),
  word_count: z.number().int(),
  source: z.object({ url: z.string(), status_code: z.number().int(), content_type: z.string().nullable(), redirects: z.number().int(), fetched_at: Iso }),
  extractor: z.string(),
});

export function dataWebExtract(policy: SafeFetchPolicy): SkuHandler<SingleTargetInput> {
  return {
    skuId: "data.web-extract",
    poweredBy: "svc-http/readability",
    input: singleTargetInput(policy, "one http(s) URL is required (url, urls or in task)"),
    output: Output,
    upstreams: (v) => [targetOf(v)!],
    async run(v, ctx) {
      const target = targetOf(v)!;
      const page = await fetchPage(target, policy, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES, userAgent: "svc-web-extract/1.0" });
      // The target is content-trap scanned before anything reads it (spec): a flagged page is refused, uncharged.
      const trapped = scanPage(page.body);
      if (trapped.length) throw new SkuRefusal("content_trap", `${target} trips the content-trap scan (rules: ${trapped.join(", ")})`);
      const article = readMainContent(page.body);
      if (!article) throw new Error(`${target} has no readable main content`);
      return {
        url: target,
        final_url: page.finalUrl,
        title: article.title,
        byline: article.byline,
        site_name: article.siteName,
        published_time: article.publishedTime,
        excerpt: article.excerpt,
        content_markdown: article.markdown,
        word_count: article.text.trim().split(/\s+/).length,
        source: { url: page.finalUrl, status_code: page.status, content_type: page.contentType, redirects: page.hops.length - 1, fetched_at: ctx.now.toISOString() },
        extractor: "@mozilla/readability (Firefox Reader View) + turndown",
      };
    },
  };
}

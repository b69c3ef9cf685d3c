import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { z } from "zod";
import { followRedirects } from "../platform/http/follow-redirects.js";
import { checkTarget, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { SkuHandler } from "./sku-handler.js";

// data.web-extract: the main content of one buyer-supplied URL, as Firefox Reader View extracts it
// (@mozilla/readability over a linkedom DOM), converted to Markdown (turndown). Fetched through the
// safe fetcher, redirects re-checked per hop. A page that cannot be fetched or has no readable content
// fails the call, so nothing is charged.

const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

const Input = z
  .object({
    url: z.string().max(2048).optional(),
    urls: z.array(z.string().max(2048)).length(1, "exactly one URL").optional(),
    task: z.string().max(4096).optional(),
  })
  .loose();
type Input = z.infer<typeof Input>;

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]]+/i;

/** The one URL: `url`, else `urls[0]`, else the first URL written in `task`. */
export function targetOf(input: Input): string | undefined {
  return input.url ?? input.urls?.[0] ?? input.task?.match(URL_IN_TEXT)?.[0]?.replace(/[.,;:!?]+$/, "");
}

export function dataWebExtract(policy: SafeFetchPolicy): SkuHandler<Input> {
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  const input = Input.superRefine((v, ctx) => {
    const target = targetOf(v);
    if (!target) return ctx.addIssue({ code: "custom", path: ["url"], message: "one http(s) URL is required (url, urls or in task)" });
    try {
      checkTarget(target, policy);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `${target}: ${(err as Error).message}` });
    }
  });
  return {
    skuId: "data.web-extract",
    poweredBy: "svc-http/readability",
    input,
    async run(v, ctx) {
      const target = targetOf(v)!;
      const { hops, response } = await followRedirects(target, "GET", policy, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES, userAgent: "svc-web-extract/1.0" });
      if (response.status < 200 || response.status >= 300) throw new Error(`${target} answered ${response.status}`);
      const type = String(response.headers["content-type"] ?? "");
      if (type && !/html|xml/i.test(type)) throw new Error(`${target} is ${type}, not an HTML page`);
      const finalUrl = hops.at(-1)!.url;
      // linkedom's window types assume the DOM lib, which this Node project does not load.
      const { document } = parseHTML(response.body) as unknown as { document: ConstructorParameters<typeof Readability>[0] };
      const article = new Readability(document).parse();
      if (!article?.content || !article.textContent?.trim()) throw new Error(`${target} has no readable main content`);
      const markdown = turndown.turndown(article.content).trim();
      return {
        url: target,
        final_url: finalUrl,
        title: article.title ?? null,
        byline: article.byline ?? null,
        site_name: article.siteName ?? null,
        published_time: article.publishedTime ?? null,
        excerpt: article.excerpt ?? null,
        content_markdown: markdown,
        word_count: article.textContent.trim().split(/\s+/).length,
        source: { url: finalUrl, status_code: response.status, content_type: type || null, redirects: hops.length - 1, fetched_at: ctx.now.toISOString() },
        extractor: "@mozilla/readability (Firefox Reader View) + turndown",
      };
    },
  };
}

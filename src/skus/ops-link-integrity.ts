import { z } from "zod";
import { Iso } from "./output-shapes.js";
import { followRedirects, type Hop } from "../platform/http/follow-redirects.js";
import { checkTarget, UnsafeUrlError, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { SkuHandler } from "./sku-handler.js";

// ops.link-integrity: HEAD (falling back to GET when HEAD is refused or fails) for every URL in the task
// and in `urls`, following up to 5 redirects, each hop re-checked by the safe fetcher (a redirect into
// a private range is refused). PASS when the final answer is 2xx; the report is PASS only if all pass.

export const MAX_URLS = 20;
const TIMEOUT_MS = 5_000;
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]]+/gi;
const HEAD_REFUSED = new Set([405, 501]);

const Input = z
  .object({
    task: z.string().max(20_000).optional(),
    urls: z.array(z.string().max(2048)).max(MAX_URLS).optional(),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Verdict = z.enum(["PASS", "FAIL"]);
const Output = z.object({
  status: Verdict,
  checked: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  results: z.array(
    z.object({
      url: z.string(),
      status: Verdict,
      status_code: z.number().int().nullable(),
      method: z.enum(["HEAD", "GET"]).nullable(),
      final_url: z.string().nullable(),
      redirects: z.array(z.object({ status_code: z.number().int(), location: z.string() })),
      error: z.string().nullable(),
      checked_at: Iso,
    }),
  ),
  method: z.string(),
  checked_at: Iso,
});

/** The URLs to check: `urls` first, then those written in `task`, deduplicated, trailing punctuation trimmed. */
export function urlsOf(input: Input): string[] {
  const fromTask = (input.task?.match(URL_IN_TEXT) ?? []).map((u) => u.replace(/[.,;:!?]+$/, ""));
  return [...new Set([...(input.urls ?? []), ...fromTask])];
}

const follow = async (url: string, method: "HEAD" | "GET", policy: SafeFetchPolicy): Promise<Hop[]> =>
  (await followRedirects(url, method, policy, { timeoutMs: TIMEOUT_MS, maxBytes: 16 * 1024, userAgent: "svc-link-integrity/1.0" })).hops;

async function check(url: string, policy: SafeFetchPolicy, now: () => Date) {
  let hops: Hop[] = [];
  let error: string | null = null;
  try {
    hops = await follow(url, "HEAD", policy);
    if (HEAD_REFUSED.has(hops.at(-1)!.status_code)) hops = [...hops, ...(await follow(hops.at(-1)!.url, "GET", policy))];
  } catch (err) {
    error = (err as Error).message;
    // A HEAD that failed outright (reset, unsafe target aside) gets one GET before the URL fails.
    if (!(err instanceof UnsafeUrlError) && hops.length === 0) {
      try {
        hops = await follow(url, "GET", policy);
        error = null;
      } catch (again) {
        error = (again as Error).message;
      }
    }
  }
  const last = hops.at(-1);
  const pass = error === null && last !== undefined && last.status_code >= 200 && last.status_code < 300;
  return {
    url,
    status: pass ? "PASS" : "FAIL",
    status_code: last?.status_code ?? null,
    method: last?.method ?? null,
    final_url: last?.url ?? null,
    redirects: hops.filter((h) => h.location).map((h) => ({ status_code: h.status_code, location: h.location })),
    error,
    checked_at: now().toISOString(),
  };
}

export function opsLinkIntegrity(policy: SafeFetchPolicy): SkuHandler<Input> {
  const input = Input.superRefine((v, ctx) => {
    const urls = urlsOf(v);
    if (urls.length === 0) ctx.addIssue({ code: "custom", path: ["task"], message: "no http(s) URL in task or urls" });
    if (urls.length > MAX_URLS) ctx.addIssue({ code: "custom", path: ["urls"], message: `at most ${MAX_URLS} URLs per call` });
    for (const u of urls) {
      try {
        checkTarget(u, policy);
      } catch (err) {
        ctx.addIssue({ code: "custom", path: ["urls"], message: `${u}: ${(err as Error).message}` });
      }
    }
  });
  return {
    skuId: "ops.link-integrity",
    poweredBy: "svc-http/link-integrity",
    input,
    output: Output,
    async run(v, ctx) {
      const results = await Promise.all(urlsOf(v).map((u) => check(u, policy, () => new Date())));
      const failed = results.filter((r) => r.status === "FAIL").length;
      return {
        status: failed === 0 ? "PASS" : "FAIL",
        checked: results.length,
        passed: results.length - failed,
        failed,
        results,
        method: "HEAD, falling back to GET on 405/501 or a failed HEAD; up to 5 redirects, each hop through the safe fetcher; PASS = final 2xx",
        checked_at: ctx.now.toISOString(),
      };
    },
  };
}

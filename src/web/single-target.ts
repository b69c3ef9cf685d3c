import { z } from "zod";
import { checkTarget, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// The input of an engine that reads one buyer-supplied page: its URL given as `url`, as the only entry
// of `urls`, or written in the task text. A missing URL, or one the safe fetcher would refuse, is a
// field error on `url` (a 400 before any challenge), so run() always has a fetchable target.

const SingleTargetFields = z
  .object({
    url: z.string().max(2048).optional(),
    urls: z.array(z.string().max(2048)).length(1, "exactly one URL").optional(),
    task: z.string().max(4096).optional(),
  })
  .loose();
export type SingleTargetInput = z.infer<typeof SingleTargetFields>;

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]]+/i;

/** The one URL: `url`, else `urls[0]`, else the first URL written in `task`. */
export function targetOf(input: SingleTargetInput): string | undefined {
  return input.url ?? input.urls?.[0] ?? input.task?.match(URL_IN_TEXT)?.[0]?.replace(/[.,;:!?]+$/, "");
}

/** The input schema; `missing` is the message when no URL is given at all. */
export function singleTargetInput(policy: SafeFetchPolicy, missing: string) {
  return SingleTargetFields.superRefine((v, ctx) => {
    const target = targetOf(v);
    if (!target) return ctx.addIssue({ code: "custom", path: ["url"], message: missing });
    try {
      checkTarget(target, policy);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `${target}: ${(err as Error).message}` });
    }
  });
}

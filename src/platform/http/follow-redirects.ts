import { safeRequest, type SafeFetchPolicy, type SafeFullResponse } from "./safe-fetch.js";

// Redirects followed by hand: every hop is a new safe request, so a redirect into a private range is
// refused like any other unsafe URL.

export const MAX_REDIRECTS = 5;

export interface Hop {
  method: "HEAD" | "GET";
  url: string;
  status_code: number;
  location: string | null;
}

export interface FollowOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
}

/** Follows `start` to its final answer; the last hop carries the response. */
export async function followRedirects(start: string, method: "HEAD" | "GET", policy: SafeFetchPolicy, o: FollowOptions): Promise<{ hops: Hop[]; response: SafeFullResponse }> {
  const hops: Hop[] = [];
  let url = start;
  for (;;) {
    const response = await safeRequest(url, { method, timeoutMs: o.timeoutMs, maxBytes: o.maxBytes, headers: { "user-agent": o.userAgent } }, policy);
    const raw = response.status >= 300 && response.status < 400 ? String(response.headers.location ?? "") : "";
    const location = raw ? new URL(raw, url).toString() : null;
    hops.push({ method, url, status_code: response.status, location });
    if (!location) return { hops, response };
    if (hops.length > MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
    url = location;
  }
}

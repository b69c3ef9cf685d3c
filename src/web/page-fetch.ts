import { followRedirects, type Hop } from "../platform/http/follow-redirects.js";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// Fetching one buyer-supplied web page: through the safe fetcher, redirects re-checked hop by hop, a
// non-2xx answer or a body that is not HTML/XML is an error (the engines decide whether it is fatal).

export interface PageFetchOptions {
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
  /** Content types accepted besides HTML/XML (e.g. JSON-LD served bare). */
  accept?: RegExp;
}

export interface FetchedPage {
  /** The URL asked for. */
  url: string;
  /** The URL that answered, after redirects. */
  finalUrl: string;
  status: number;
  contentType: string | null;
  body: string;
  hops: Hop[];
  fetchedAt: Date;
}

export class PageFetchError extends Error {}

export async function fetchPage(url: string, policy: SafeFetchPolicy, o: PageFetchOptions): Promise<FetchedPage> {
  const { hops, response } = await followRedirects(url, "GET", policy, { timeoutMs: o.timeoutMs, maxBytes: o.maxBytes, userAgent: o.userAgent });
  if (response.status < 200 || response.status >= 300) throw new PageFetchError(`${url} answered ${response.status}`);
  const type = String(response.headers["content-type"] ?? "");
  if (type && !/html|xml/i.test(type) && !o.accept?.test(type)) throw new PageFetchError(`${url} is ${type}, not an HTML page`);
  return { url, finalUrl: hops.at(-1)!.url, status: response.status, contentType: type || null, body: response.body, hops, fetchedAt: new Date() };
}

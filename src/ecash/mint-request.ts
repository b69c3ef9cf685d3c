import { HttpResponseError, JSONInt, MintOperationError, NetworkError, RateLimitError, type RequestFn } from "@cashu/cashu-ts";
import { safeRequest, UnsafeUrlError, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// cashu-ts's pluggable request function (the `customRequest` of its Mint), built on the safe fetcher:
// every mint call of the service goes through safeRequest (address checks at connect time, no
// redirects, bounded time and size, the per-origin circuit breaker). It keeps cashu-ts's error
// contract: a NUT-00 error body `{code, detail}` with status 400 is a MintOperationError carrying the
// NUT code; 429 a RateLimitError; other statuses an HttpResponseError; no answer a NetworkError.

const MAX_BYTES = 1024 * 1024;

export function mintRequest(policy: SafeFetchPolicy, timeoutMs: number): RequestFn {
  return async <T>(options: Parameters<RequestFn>[0]): Promise<T> => {
    const method = (options.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "POST") throw new NetworkError(`method ${method} is not used with mints`);
    const body = options.requestBody ? JSONInt.stringify(options.requestBody) : undefined;
    // A fresh connection per call: a pooled socket the mint closed (a restart) would fail the next
    // call with "socket hang up", and a swap must never be sent into that ambiguity needlessly.
    const headers: Record<string, string> = { accept: "application/json", connection: "close", ...(body ? { "content-type": "application/json" } : {}), ...options.headers };
    let res;
    try {
      res = await safeRequest(options.endpoint, { method, headers, body, timeoutMs, maxBytes: MAX_BYTES }, policy);
    } catch (err) {
      if (err instanceof UnsafeUrlError) throw err;
      throw new NetworkError(err instanceof Error ? err.message : "mint request failed", { cause: err });
    }
    if (res.status === 429) throw new RateLimitError("429 Too Many Requests");
    if (res.status < 200 || res.status >= 300) {
      let parsed: unknown;
      try {
        parsed = JSONInt.parse(res.body);
      } catch {
        parsed = undefined;
      }
      const e = (parsed ?? {}) as { code?: unknown; detail?: unknown; error?: unknown };
      if (res.status === 400 && typeof e.code === "number" && typeof e.detail === "string") throw new MintOperationError(e.code, e.detail);
      const message = typeof e.error === "string" ? e.error : typeof e.detail === "string" ? e.detail : `HTTP ${res.status}`;
      throw new HttpResponseError(message.slice(0, 200), res.status);
    }
    try {
      if (!res.body) throw new Error("empty body");
      return JSONInt.parse(res.body) as T;
    } catch (err) {
      throw new HttpResponseError("bad response", res.status, { cause: err });
    }
  };
}

import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// A fetch for viem's http transport (its `fetchFn` option) that sends every JSON-RPC request through
// the safe fetcher: the operator's allowlist, the per-origin circuit breakers, a deadline and a size cap.

export function safeRpcFetch(policy: SafeFetchPolicy, timeoutMs: number, maxBytes = 1024 * 1024): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    if (init?.body !== undefined && init.body !== null && typeof init.body !== "string") throw new TypeError("JSON-RPC bodies are strings");
    const method = (init?.method ?? "POST").toUpperCase();
    if (method !== "POST" && method !== "GET") throw new TypeError(`unsupported method ${method}`);
    const res = await safeRequest(url, { method, headers, body: init?.body ?? undefined, timeoutMs, maxBytes }, policy);
    if (res.status < 200 || res.status > 599) throw new Error(`${new URL(url).origin} answered with HTTP status ${res.status}`);
    const type = res.headers["content-type"];
    const nullBody = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(nullBody ? null : res.body, { status: res.status, headers: type ? { "content-type": String(type) } : {} });
  }) as typeof fetch;
}

import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import type { Breakers } from "../../policy/circuit-breakers.js";

// Outbound requests to URLs that agents supply. http(s) only; every address the host resolves to must
// be public unicast (private, loopback, link-local, metadata, CGNAT, multicast and reserved ranges are
// refused) unless its host is on the operator's allowlist. The check runs inside the socket's DNS
// lookup, so the address validated is the address connected to (no rebinding window). No redirects
// are followed; size and time are bounded.

export class UnsafeUrlError extends Error {}

export interface SafeFetchPolicy {
  /** `host` or `host:port` entries allowed even when they resolve to a private address (tests, intranets). */
  allow: readonly string[];
  /** Whether plain http is allowed (dev chain only). */
  allowHttp: boolean;
  /** Per-origin circuit breakers: failures (network errors, timeouts, 5xx, 429) count, an open one fails fast. */
  breakers?: Breakers;
}

export interface SafeResponse {
  status: number;
  body: string;
}

function publicAddress(address: string): boolean {
  try {
    const ip = ipaddr.process(address);
    return ip.range() === "unicast";
  } catch {
    return false;
  }
}

/** Validates the form of a URL (scheme, no credentials); the addresses are checked at connect time. */
export function checkUrl(raw: string, policy: SafeFetchPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError("not an absolute URL");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowHttp)) throw new UnsafeUrlError(policy.allowHttp ? "only http and https URLs are allowed" : "only https URLs are allowed");
  if (url.username || url.password) throw new UnsafeUrlError("URLs with credentials are not allowed");
  return url;
}

/** checkUrl, plus a literal IP address must be public (names are checked when they resolve). Throws UnsafeUrlError. */
export function checkTarget(raw: string, policy: SafeFetchPolicy): URL {
  const url = checkUrl(raw, policy);
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(literal) && !allowed(url, policy) && !publicAddress(literal)) throw new UnsafeUrlError(`${literal} is not a public address`);
  return url;
}

function allowed(url: URL, policy: SafeFetchPolicy): boolean {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return policy.allow.includes(host) || policy.allow.includes(`${host}:${port}`);
}

function guardedLookup(url: URL, policy: SafeFetchPolicy): LookupFunction {
  const trusted = allowed(url, policy);
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 0);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => !trusted && !publicAddress(a.address));
      if (bad || list.length === 0) return callback(new UnsafeUrlError(`${hostname} resolves to a non-public address`), "", 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export interface SafeRequest {
  method: "GET" | "HEAD" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface SafeFullResponse extends SafeResponse {
  headers: Record<string, string | string[] | undefined>;
}

/** POSTs `body` to an agent-supplied URL under the policy; resolves with the status (never follows redirects). */
export function safePost(raw: string, body: string, headers: Record<string, string>, policy: SafeFetchPolicy, timeoutMs = 5_000, maxBytes = 64 * 1024): Promise<SafeResponse> {
  return safeRequest(raw, { method: "POST", headers, body, timeoutMs, maxBytes }, policy);
}

/** One request to an agent-supplied URL under the policy; never follows redirects (callers re-check each hop). */
export async function safeRequest(raw: string, r: SafeRequest, policy: SafeFetchPolicy): Promise<SafeFullResponse> {
  const breakers = policy.breakers;
  if (!breakers) return request(raw, r, policy);
  await breakers.admit(raw);
  try {
    const res = await request(raw, r, policy);
    if (res.status >= 500 || res.status === 429) await breakers.failure(raw);
    else await breakers.success(raw);
    return res;
  } catch (err) {
    // A refused target is the caller's mistake, not the upstream's failure.
    if (err instanceof UnsafeUrlError) await breakers.release(raw);
    else await breakers.failure(raw);
    throw err;
  }
}

function request(raw: string, r: SafeRequest, policy: SafeFetchPolicy): Promise<SafeFullResponse> {
  const { timeoutMs = 5_000, maxBytes = 64 * 1024 } = r;
  let url: URL;
  try {
    url = checkTarget(raw, policy);
  } catch (err) {
    return Promise.reject(err);
  }
  const mod = url.protocol === "https:" ? https : http;
  const headers = r.body === undefined ? { ...r.headers } : { ...r.headers, "content-length": Buffer.byteLength(r.body) };
  return new Promise((resolve, reject) => {
    // One deadline for the whole exchange (a trickling server cannot hold it open), and the promise
    // settles on every path: end, error, or the response closed early after the size cap.
    const deadline = setTimeout(() => req.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    const req = mod.request(url, { method: r.method, headers, lookup: guardedLookup(url, policy), timeout: timeoutMs }, (res) => {
      let size = 0;
      const chunks: Buffer[] = [];
      const done = () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") });
      };
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= maxBytes) chunks.push(c);
        else res.destroy();
      });
      res.on("end", done);
      res.on("close", done);
      res.on("error", () => done());
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end(r.body);
  });
}

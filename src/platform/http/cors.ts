import type http from "node:http";
import type http2 from "node:http2";

// CORS for the browser-facing routes. Two classes:
// - public reads (catalog, rules, health, proofs, passports, reputation, OpenAPI, agent card, skill guide,
//   facilitator `supported`): GET/HEAD from any origin (`*`), no credentials;
// - everything else a browser wallet or web app might call (paid calls, registration, marketplace,
//   Connect/gRPC-Web RPCs): only origins listed in CORS_ORIGINS (`*` = any), echoing the origin.
// Never: operator routes, the facilitator's verify/settle (server to server), /metrics, and /mcp (the
// MCP front keeps its own Origin guard against DNS rebinding). No route ever allows credentials
// (cookies): callers authenticate with headers (API keys, payment signatures).

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

const PUBLIC_READS: RegExp[] = [
  /^\/v1\/services$/,
  /^\/v1\/skill\.md$/,
  /^\/v1\/health(\/[a-z]+)?$/,
  /^\/v1\/rules$/,
  /^\/v1\/openapi\.json$/,
  /^\/\.well-known\/agent(-card)?\.json$/,
  /^\/v1\/proofs(\/.*)?$/,
  /^\/facilitator\/supported$/,
  /^\/a2a\/passport\/[^/]+$/,
  /^\/a2a\/agents\/[^/]+\/(reputation|instructions|registration\.json)$/,
  /^\/a2a\/requests\/open$/,
  /^\/a2a\/witness\/seats$/,
];
const NEVER: RegExp[] = [/^\/v1\/admin(\/|$)/, /^\/facilitator\/(verify|settle)$/, /^\/metrics$/, /^\/mcp(\/|$)/];

const ALLOW_HEADERS = [
  "content-type",
  "authorization",
  "payment-signature",
  "x-payment",
  "x-cashu",
  "x-request-id",
  "connect-protocol-version",
  "connect-timeout-ms",
  "x-grpc-web",
  "x-user-agent",
  "grpc-timeout",
].join(", ");
/** Response headers a browser client must read: the x402 challenge and receipt above all. */
export const EXPOSE_HEADERS = [
  "payment-required",
  "payment-response",
  "x-payment-response",
  "x-request-id",
  "retry-after",
  "x-cashu",
  "svc-comp-denial",
  "grpc-status",
  "grpc-message",
].join(", ");
const MAX_AGE = "600";

/** Parses CORS_ORIGINS: `""` (none), `*`, or comma-separated `scheme://host[:port]` origins; undefined when malformed. */
export function parseCorsOrigins(value: string): string[] | undefined {
  const items = value.split(",").map((s) => s.trim()).filter(Boolean);
  const out: string[] = [];
  for (const item of items) {
    if (item === "*") {
      out.push("*");
      continue;
    }
    let u: URL;
    try {
      u = new URL(item);
    } catch {
      return undefined;
    }
    if ((u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== item.replace(/\/$/, "")) return undefined;
    out.push(u.origin);
  }
  return out;
}

export type CorsClass = "public" | "allowlisted" | "never";

export function corsClass(path: string, method: string): CorsClass {
  if (NEVER.some((r) => r.test(path))) return "never";
  if ((method === "GET" || method === "HEAD") && PUBLIC_READS.some((r) => r.test(path))) return "public";
  return "allowlisted";
}

/**
 * Wraps a node handler with the CORS policy: answers preflights itself (204) and adds the CORS
 * response headers to allowed cross-origin requests. Requests without Origin pass through untouched.
 */
export function withCors<H extends (req: any, res: any) => unknown>(handler: H, allowlist: readonly string[]): H {
  const anyOrigin = allowlist.includes("*");
  const listed = new Set(allowlist);
  const wrapped = (req: Req, res: Res) => {
    const origin = req.headers.origin;
    if (typeof origin !== "string" || origin === "") return handler(req, res);
    const path = (req.url ?? "/").split("?")[0]!;
    const preflightMethod = req.method === "OPTIONS" ? req.headers["access-control-request-method"] : undefined;
    const method = typeof preflightMethod === "string" ? preflightMethod.toUpperCase() : (req.method ?? "GET");
    const cls = corsClass(path, method);
    if (cls === "never") return handler(req, res);
    const allowed = cls === "public" || anyOrigin || listed.has(origin);
    if (preflightMethod !== undefined) {
      // A preflight: answered here, never by the routes (they would say 405).
      const headers: Record<string, string> = { vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers", "content-length": "0" };
      if (allowed) {
        headers["access-control-allow-origin"] = cls === "public" && !listed.has(origin) && !anyOrigin ? "*" : origin;
        headers["access-control-allow-methods"] = cls === "public" ? "GET, HEAD" : "GET, HEAD, POST";
        headers["access-control-allow-headers"] = cls === "public" ? "x-request-id" : ALLOW_HEADERS;
        headers["access-control-max-age"] = MAX_AGE;
      }
      res.writeHead(204, headers);
      res.end();
      return;
    }
    if (allowed) {
      const public_ = cls === "public" && !listed.has(origin) && !anyOrigin;
      res.setHeader("access-control-allow-origin", public_ ? "*" : origin);
      res.setHeader("access-control-expose-headers", EXPOSE_HEADERS);
      if (!public_) res.setHeader("vary", "Origin");
    } else {
      res.setHeader("vary", "Origin");
    }
    return handler(req, res);
  };
  return wrapped as unknown as H;
}

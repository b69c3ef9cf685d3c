import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { requestIdFrom, runWithRequestContext } from "../request-context.js";
import { startServerSpan } from "../tracing/tracing.js";
import { SpanStatusCode } from "@opentelemetry/api";
import type { AppMetrics } from "./app-metrics.js";

// The HTTP edge of the one port: gives every request its request id (a sane `x-request-id` is honoured,
// else a UUID; echoed in the response and forwarded to the RPC layer), runs it in that request context
// (log lines, job rows and webhook events pick the id up), counts and times it by route template, wraps
// it in a server span when tracing is on, and serves `GET /metrics`.

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;
type Handler = (req: any, res: any) => void;

export interface ObservedHttpOptions {
  metrics: AppMetrics;
  /** The bounded route label of a request: a REST route template, an RPC path, a front prefix, or "unmatched". */
  routeOf: (method: string, path: string) => string;
  /** When set, `/metrics` requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

export const METRICS_PATH = "/metrics";

function sha256(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1] ?? "";
  return timingSafeEqual(sha256(given), sha256(token));
}

async function serveMetrics(req: Req, res: Res, o: ObservedHttpOptions): Promise<void> {
  const reply = (status: number, type: string, body: string, extra: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": type, "content-length": String(Buffer.byteLength(body)), "cache-control": "no-store", ...extra });
    if (req.method === "HEAD") res.end();
    else res.end(body);
  };
  const json = "application/json; charset=utf-8";
  if (req.method !== "GET" && req.method !== "HEAD") {
    return reply(405, json, JSON.stringify({ error: { code: "method_not_allowed", message: `${req.method} is not allowed on ${METRICS_PATH}` } }), { allow: "GET, HEAD" });
  }
  if (o.metricsToken && !bearerMatches(req.headers.authorization, o.metricsToken)) {
    return reply(401, json, JSON.stringify({ error: { code: "auth_required", message: "metrics need Authorization: Bearer <METRICS_TOKEN>" } }), { "www-authenticate": "Bearer" });
  }
  try {
    reply(200, o.metrics.contentType, await o.metrics.render());
  } catch {
    reply(500, json, JSON.stringify({ error: { code: "internal", message: "internal error" } }));
  }
}

/**
 * Counts and times one answered request by (method, route label, status). The metric children are kept per
 * label set, bounded like the labels themselves: prom-client hashes a label object on every inc/observe
 * otherwise (a hot-path cost on the challenge path).
 */
export function httpRequestRecorder(metrics: AppMetrics): (method: string, route: string, status: number, startedNs: bigint) => void {
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  return (method, route, status, startedNs) => {
    const key = `${method} ${route} ${status}`;
    let c = children.get(key);
    if (!c) {
      const labels = { method, route, status: String(status) };
      c = { count: metrics.httpRequests.labels(labels), time: metrics.httpDuration.labels(labels) };
      children.set(key, c);
    }
    c.count.inc();
    c.time.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
  };
}

export function observedHttp(handler: Handler, o: ObservedHttpOptions): Handler {
  const record = httpRequestRecorder(o.metrics);
  // The route label is a pure function of (method, path); matching runs every route's regex, so recent
  // answers are kept (bounded: short paths only, cleared when full).
  const labelCache = new Map<string, string>();
  const routeOf = (method: string, path: string): string => {
    if (path.length > 256) return o.routeOf(method, path);
    const key = `${method} ${path}`;
    let route = labelCache.get(key);
    if (route === undefined) {
      route = o.routeOf(method, path);
      if (labelCache.size >= 1024) labelCache.clear();
      labelCache.set(key, route);
    }
    return route;
  };
  return (req: Req, res: Res) => {
    const started = process.hrtime.bigint();
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    // The RPC layer (interceptors, REST shim) reads the same id from the request.
    req.headers["x-request-id"] = requestId;
    res.setHeader("x-request-id", requestId);
    const route = path === METRICS_PATH ? METRICS_PATH : routeOf(method, path);
    const { span, run } = startServerSpan(`${method} ${route}`, { "http.request.method": method, "http.route": route, "svc.request_id": requestId });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const status = res.statusCode;
      record(method, route, status, started);
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once("finish", finish);
    res.once("close", finish);
    runWithRequestContext({ requestId }, () =>
      run(() => {
        if (path === METRICS_PATH) void serveMetrics(req, res, o);
        else handler(req, res);
      }),
    );
  };
}

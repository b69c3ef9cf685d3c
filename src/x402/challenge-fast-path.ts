import type http from "node:http";
import type http2 from "node:http2";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { PaymentService } from "../../gen/svc/payment/v1/payment_service_pb.js";
import type { Logger } from "../platform/log.js";
import type { AppMetrics } from "../platform/metrics/app-metrics.js";
import { httpRequestRecorder } from "../platform/metrics/observed-http.js";
import { requestIdFrom } from "../platform/request-context.js";
import { tracingEnabled } from "../platform/tracing/tracing.js";
import { DEFAULT_SECURITY_HEADERS } from "../platform/http/security-headers.js";
import { setPrereadBody } from "../platform/http/preread-body.js";
import { KIT_VERSION_HEADER } from "../catalog/kit.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import { JURISDICTION_HEADER } from "../policy/jurisdiction.js";
import { challengeBody } from "../rest/rest-shim.js";
import type { RestContext, RouteTable, RpcRoute } from "../rest/route-table.js";
import { httpStatusFor } from "../rest/status-table.js";
import { PAYMENT_REQUIRED, type PaymentGate } from "./payment-gate.js";
import { encodePaymentRequired } from "./wire.js";

// The challenge fast path: an unpaid REST call of a paid SKU (POST /v1/services/{sku_id} carrying no payment
// header of any kind) is answered its 402 here, in front of the whole HTTP edge: no request context, server
// span, Connect adapter, RPC interceptors or in-process transport. It runs the gate's own pre-challenge checks
// (PaymentGate.beforeChallenge) and builds the challenge with the gate's own builder (firstChallenge, cached
// per SKU and base URL), and writes what the normal path writes: the same status, headers (request id,
// security headers, the REST shim's) and body. It counts what the normal path counts: the HTTP request by
// route, the payments outcome, the RPC metric and the refusal log line (with the request id).
// Anything else - a refusal, an unpaid-subject answer, a payment, an Authorization, kit or Origin header,
// another content type or encoding, HTTP/2, tracing on - goes through the normal edge (`next`), with the body
// it already read left for the REST shim (preread-body.ts); when the gate's checks already ran, the normal
// path reuses their outcome (PaymentGate.reusingChecks) instead of running them twice.

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

export interface ChallengeFastPathOptions {
  gate: PaymentGate;
  table: RouteTable;
  /** The HTTP edge's route label (the same function, so the fast path counts under the same label). */
  routeOf: (method: string, path: string) => string;
  maxBodyBytes: number;
  publicBaseUrl?: string;
  metrics: AppMetrics;
  log: Logger;
  /** Most cached challenges (SKU x base URL; the Host header chooses the base URL, so it is bounded). */
  cacheSize?: number;
  /** Counts the requests the fast path answered itself (tests check it ran). */
  stats?: { answered: number };
}

/** A header naming a payment of any kind (x402's PAYMENT-SIGNATURE / X-PAYMENT, ecash, a starter-credit note...). */
const PAYMENT_HEADER = /payment|cashu|ecash|402/i;
const CALL_SERVICE = PaymentService.method.callService;
const RPC_LABELS = { service: PaymentService.typeName, method: CALL_SERVICE.name, code: "failed_precondition" };
const RPC_NAME = `${PaymentService.typeName}/${CALL_SERVICE.name}`;

/** The query of every fast-path request (it has none: see `eligible`). */
const NO_QUERY = new URLSearchParams();

interface CachedChallenge {
  status: number;
  /** The response headers after x-request-id, in the normal path's order (edge, security, REST shim). */
  headers: Record<string, string>;
  body: Buffer;
}

/** Whether the request's headers alone allow the fast path (nothing of it is read yet). */
function eligible(req: Req, maxBodyBytes: number): boolean {
  if (req.method !== "POST" || req.httpVersionMajor !== 1) return false;
  const url = req.url;
  if (!url || !url.startsWith("/v1/services/") || url.includes("?")) return false;
  const h = req.headers;
  const type = h["content-type"];
  if (type !== undefined && !/^application\/json\s*(;|$)/i.test(type)) return false;
  const length = h["content-length"];
  if (length === undefined || !(Number(length) <= maxBodyBytes)) return false;
  if (h["transfer-encoding"] !== undefined || h["content-encoding"] !== undefined || h.expect !== undefined) return false;
  // An Origin gets its CORS headers from the edge (cors.ts).
  if (h.authorization !== undefined || h.origin !== undefined || h[KIT_VERSION_HEADER] !== undefined) return false;
  for (const name in h) if (PAYMENT_HEADER.test(name)) return false;
  return true;
}

function readBody(req: Req): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Hands a request the fast path gives up on to the edge, once, with the body it already read. A class, not a
 * closure per request: tsx (esbuild keepNames) renames every named closure with Object.defineProperty as it is made.
 */
class HandOff {
  private handedOn = false;
  constructor(
    private readonly req: Req,
    private readonly res: Res,
    private readonly text: string,
    private readonly next: (req: any, res: any) => unknown,
  ) {}

  fallBack(): void {
    if (this.handedOn) return;
    this.handedOn = true;
    setPrereadBody(this.req, this.text);
    this.next(this.req, this.res);
  }
}

/** Wraps the whole HTTP edge (`next`): the fast path's own answers never enter it. */
export function withChallengeFastPath<H extends (req: any, res: any) => unknown>(next: H, o: ChallengeFastPathOptions): H {
  const cacheSize = o.cacheSize ?? 256;
  const rpcCount = o.metrics.rpcRequests.labels(RPC_LABELS);
  const rpcTime = o.metrics.rpcDuration.labels(RPC_LABELS);
  const recordHttp = httpRequestRecorder(o.metrics);
  const cache = new Map<string, CachedChallenge>();
  const cached = (sku: SkuDefinition, baseUrl: string): CachedChallenge => {
    const key = `${sku.skuId} ${baseUrl}`;
    let hit = cache.get(key);
    if (!hit) {
      const ch = o.gate.firstChallenge(sku, baseUrl);
      const body = Buffer.from(JSON.stringify(challengeBody(ch.v1, "payment_required", PAYMENT_REQUIRED)));
      // The edge's security headers, then the REST shim's `send` unrolled (same headers, same order; its
      // x-content-type-options is already among the security headers, where the normal path keeps it too).
      const headers: Record<string, string> = {
        ...DEFAULT_SECURITY_HEADERS,
        "cache-control": "no-store",
        "payment-required": encodePaymentRequired(ch.v2),
        "content-type": "application/json; charset=utf-8",
        "content-length": String(body.length),
      };
      hit = { status: httpStatusFor(Code.FailedPrecondition, "payment_required"), headers, body };
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
      cache.set(key, hit);
    }
    return hit;
  };

  // The route table's answer per path (it runs every route's regex) with its route label: recent ones kept,
  // bounded like `cached`.
  const matches = new Map<string, { match: ReturnType<RouteTable["match"]>; label: string }>();
  const matchOf = (url: string) => {
    let m = matches.get(url);
    if (!m) {
      m = { match: o.table.match("POST", url), label: o.routeOf("POST", url) };
      if (url.length <= 256) {
        if (matches.size >= cacheSize) matches.clear();
        matches.set(url, m);
      }
    }
    return m;
  };

  async function answer(req: Req, res: Res, route: RpcRoute, params: Record<string, string>, label: string): Promise<void> {
    const started = process.hrtime.bigint();
    let text: string;
    try {
      text = await readBody(req);
    } catch {
      res.destroy(); // the client went away mid-body
      return;
    }
    const edge = new HandOff(req, res, text, next);
    try {
      const body = text.trim() === "" ? undefined : (JSON.parse(text) as unknown);
      if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) return void edge.fallBack();
      const baseUrl = o.publicBaseUrl ?? `http://${req.headers.host ?? "localhost"}`;
      const ctx: RestContext = { params, query: NO_QUERY, body: body as JsonObject | undefined, headers: req.headers, baseUrl };
      // The REST shim's request mapping ({sku_id, input}). Its protobuf decoding is skipped: `input` is a
      // google.protobuf.Struct, whose JSON form is the parsed object itself, and `sku_id` a string.
      const mapped = route.request!(ctx) as { sku_id?: unknown; input?: unknown };
      if (typeof mapped.sku_id !== "string" || typeof mapped.input !== "object" || mapped.input === null || Array.isArray(mapped.input)) return void edge.fallBack();
      const skuId = mapped.sku_id;
      const jurisdiction = req.headers[JURISDICTION_HEADER];
      const outcome = o.gate.beforeChallenge({
        skuId,
        input: mapped.input as JsonObject,
        paymentHeader: undefined,
        baseUrl,
        jurisdiction: Array.isArray(jurisdiction) ? jurisdiction.join(", ") : jurisdiction,
      });
      // Refused or not to be challenged: the normal path answers, with this outcome instead of a second run of the checks.
      let before;
      try {
        before = await outcome;
      } catch {
        return void o.gate.reusingChecks(skuId, outcome, () => edge.fallBack());
      }
      if (before.kind !== "challenge") return void o.gate.reusingChecks(skuId, outcome, () => edge.fallBack());
      const ch = cached(before.sku, baseUrl);
      const requestId = requestIdFrom(req.headers["x-request-id"]);
      // What the normal path counts and logs for this call: the payments outcome, the RPC metric, the refusal line.
      o.gate.countChallenged();
      rpcCount.inc();
      const elapsed = Number(process.hrtime.bigint() - started);
      rpcTime.observe(elapsed / 1e9);
      if (o.log.isLevelEnabled("info")) o.log.info({ rpc: RPC_NAME, requestId, ms: +(elapsed / 1e6).toFixed(2), code: Code[Code.FailedPrecondition], reason: "payment_required" }, "rpc refused");
      if (o.stats) o.stats.answered++;
      (res as http.ServerResponse).writeHead(ch.status, { "x-request-id": requestId, ...ch.headers });
      res.end(ch.body);
      recordHttp("POST", label, ch.status, started);
    } catch {
      // A body the REST mapping refuses, or anything unexpected: the normal path answers.
      if (!res.headersSent) edge.fallBack();
    }
  }

  const wrapped = (req: Req, res: Res) => {
    // With tracing on, the normal path makes the server and RPC spans.
    if (!eligible(req, o.maxBodyBytes) || tracingEnabled()) return next(req, res);
    const { match, label } = matchOf(req.url!);
    if (match.kind !== "found" || match.route.kind !== "rpc" || match.route.rpc !== CALL_SERVICE || !match.route.request || match.route.codec === "proto") return next(req, res);
    void answer(req, res, match.route, match.params, label).catch(() => res.destroy());
  };
  return wrapped as unknown as H;
}

import type { connectNodeAdapter } from "@connectrpc/connect-node";
import { requestIdFrom } from "../platform/request-context.js";
import type { IncomingHttpHeaders } from "node:http";
import { takePrereadBody } from "../platform/http/preread-body.js";
import { largeBodyAnswer } from "../platform/http/large-body.js";
import { fromJson, toJson, type DescMethod, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import type { Logger } from "../platform/log.js";
import { errorReason } from "../platform/rpc/errors.js";
import { fromLegacyJson, LegacyJsonError, toLegacyJson } from "./legacy-json.js";
import type { RestContext, RestResult, RestRoute, RouteTable, RpcRoute } from "./route-table.js";
import { httpStatusFor } from "./status-table.js";
import { PaymentRequiredSchema, type PaymentRequired } from "../../gen/svc/payment/v1/x402_pb.js";

// The REST shim: translates the spec's HTTP surface into RPC calls on the in-process Connect
// transport (so interceptors run exactly as for gRPC and Connect clients) and back.

type NodeHandler = ReturnType<typeof connectNodeAdapter>;
type NodeReq = Parameters<NodeHandler>[0];
type NodeRes = Parameters<NodeHandler>[1];

/** Request headers never forwarded to the RPC layer (transport-level or interpreted by Connect). */
const NOT_FORWARDED = /^(connection|keep-alive|transfer-encoding|upgrade|te|content-(type|length|encoding)|accept-encoding|connect-.*|grpc-.*|:.*)$/;
/** Response headers an RPC may set that the REST response carries. */
const FORWARDED_BACK = ["cache-control", "payment-response", "x-payment-response", "payment-required", "retry-after", "x-request-id", "svc-comp-denial", "x-cashu"];
/** Errors that carry an x402 challenge: their REST body is the x402 v1 402 body, not the error envelope. */
const CHALLENGE_REASONS = new Set(["payment_required", "payment_failed", "payment_invalid", "payment_reused"]);

export interface RestShimOptions {
  table: RouteTable;
  transport: Transport;
  maxBodyBytes: number;
  log: Logger;
  publicBaseUrl?: string;
}

class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
  }
}

export function errorBody(code: string, message: string): JsonObject {
  return { error: { code, message } };
}

async function readBody(req: NodeReq, limit: number): Promise<string> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit) throw new HttpError(413, "body_too_large", `request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, "body_too_large", `request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJsonBody(text: string): JsonValue | undefined {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(err as Error).message}`);
  }
}

function queryJson(query: URLSearchParams): JsonObject {
  const out: JsonObject = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    out[key] = all.length > 1 ? all : all[0]!;
  }
  return out;
}

/** Query strings are text: give bool and repeated fields the JSON types the codec expects. */
function coerceQuery(method: DescMethod, json: JsonObject): JsonObject {
  for (const field of method.input.fields) {
    const v = json[field.name];
    if (v === undefined) continue;
    if (field.fieldKind === "list" && !Array.isArray(v)) json[field.name] = [v];
    else if (field.fieldKind === "scalar" && typeof v === "string" && field.scalar === 8 /* BOOL */) {
      json[field.name] = v === "true" || v === "1" ? true : v === "false" || v === "0" ? false : v;
    }
  }
  return json;
}

function forwardHeaders(req: NodeReq, requestId: string): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.test(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  headers.set("x-request-id", requestId);
  return headers;
}

function pickHeaders(from: Headers | undefined, into: Record<string, string>): void {
  if (!from) return;
  for (const name of FORWARDED_BACK) {
    const v = from.get(name);
    if (v !== null) into[name] = v;
  }
}

/**
 * Writes a REST result (the challenge fast path writes the same headers in the same order: challenge-fast-path.ts).
 * A large successful read also gets an ETag, a 304 and gzip when the request asks for them (large-body.ts).
 */
export function send(res: NodeRes, result: RestResult, req: { method?: string; headers: IncomingHttpHeaders }): void {
  let headers: Record<string, string> = { ...result.headers };
  let bytes: Buffer | undefined = encodeBody(result.body);
  let status = result.status;
  headers["content-type"] ??= "application/json; charset=utf-8";
  if (status === 200 && (req.method === "GET" || req.method === "HEAD")) ({ status, headers, body: bytes } = largeBodyAnswer(req.headers, headers, bytes));
  if (bytes) headers["content-length"] = String(bytes.length);
  headers["x-content-type-options"] = "nosniff";
  res.writeHead(status, headers);
  if (req.method === "HEAD" || !bytes) res.end();
  else res.end(bytes);
}

/**
 * A REST body as the bytes sent. Encoded once: measuring a string's UTF-8 length and then writing it encoded a large
 * body (the catalog is ~190 KB) twice.
 */
function encodeBody(body: RestResult["body"]): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
}

/** The REST body of an error that carries an x402 challenge: the x402 v1 402 body, with our code and message. */
export function challengeBody(v1: PaymentRequired, code: string, message: string): JsonObject {
  return { ...(toJson(PaymentRequiredSchema, v1) as JsonObject), code, message };
}

export function createRestShim(opts: RestShimOptions) {
  const { table, transport, log } = opts;
  /** What a `stable` route rendered for an answer object, kept while the service holds on to that object. */
  const stableRenders = new WeakMap<object, RestResult>();

  async function callRpc(route: RpcRoute, ctx: RestContext, headers: Headers): Promise<RestResult> {
    const input = route.request
      ? route.request(ctx)
      : { ...(route.method === "GET" ? coerceQuery(route.rpc, queryJson(ctx.query)) : ((ctx.body ?? {}) as JsonObject)), ...ctx.params };
    let message;
    try {
      message =
        route.codec === "proto"
          ? fromJson(route.rpc.input, input, { ignoreUnknownFields: true })
          : fromLegacyJson(route.rpc.input, input);
    } catch (err) {
      if (err instanceof LegacyJsonError) throw new HttpError(400, "invalid_argument", err.message);
      throw new HttpError(400, "invalid_argument", `invalid request: ${(err as Error).message}`);
    }
    const responseHeaders: Record<string, string> = {};
    const output = await transport.unary(route.rpc as never, undefined, undefined, headers, message as never, undefined);
    pickHeaders(output.header, responseHeaders);
    const answer = output.message as object;
    const kept = route.stable ? stableRenders.get(answer) : undefined;
    if (kept) return { ...kept, headers: { ...responseHeaders, ...kept.headers } };
    const json =
      route.codec === "proto"
        ? toJson(route.rpc.output, output.message as never, { alwaysEmitImplicit: true })
        : toLegacyJson(route.rpc.output, output.message as never);
    let rendered: RestResult = route.response ? route.response(json, ctx) : { status: route.successStatus ?? 200, body: json };
    if (route.stable) {
      // Rendered and encoded once per answer object (JSON.stringify and UTF-8 of the ~190 KB catalog took ~3 ms a read).
      rendered = { ...rendered, body: encodeBody(rendered.body) };
      stableRenders.set(answer, rendered);
    }
    return { ...rendered, headers: { ...responseHeaders, ...rendered.headers } };
  }

  function errorResult(err: unknown, requestId: string): RestResult {
    if (err instanceof HttpError) {
      return { status: err.status, headers: err.headers, body: errorBody(err.code, err.message) };
    }
    const ce = ConnectError.from(err);
    const reason = errorReason(ce);
    const headers: Record<string, string> = {};
    pickHeaders(ce.metadata, headers);
    const internal = ce.code === Code.Internal || ce.code === Code.Unknown || ce.code === Code.DataLoss;
    if (internal) log.error({ requestId, err: ce.cause ?? ce }, "rest call failed");
    const code = reason ?? Code[ce.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    const status = httpStatusFor(ce.code, reason);
    const v1 = reason && CHALLENGE_REASONS.has(reason) ? ce.findDetails(PaymentRequiredSchema).find((d) => d.x402Version === 1) : undefined;
    if (v1) {
      // x402 v1 clients read `accepts` from this body; v2 clients read the PAYMENT-REQUIRED header.
      headers["cache-control"] = "no-store";
      return { status, headers, body: challengeBody(v1, code, ce.rawMessage) };
    }
    return { status, headers, body: errorBody(internal ? "internal" : code, internal ? "internal error" : ce.rawMessage) };
  }

  return async function restShim(req: NodeReq, res: NodeRes): Promise<void> {
    // The HTTP edge (observed-http.ts) already chose it; a shim used on its own honours a sane header.
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    let result: RestResult;
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      const match = table.match(req.method ?? "GET", url.pathname);
      if (match.kind === "none") throw new HttpError(404, "route_not_found", `no route ${req.method} ${url.pathname}`);
      if (match.kind === "wrong_method") {
        throw new HttpError(405, "method_not_allowed", `${req.method} is not allowed on ${url.pathname}`, { allow: match.allow.join(", ") });
      }
      const route: RestRoute = match.route;
      const json = route.method === "POST" ? parseJsonBody(takePrereadBody(req) ?? (await readBody(req, opts.maxBodyBytes))) : undefined;
      if (json !== undefined && (typeof json !== "object" || json === null || Array.isArray(json))) {
        throw new HttpError(400, "invalid_argument", "the request body must be a JSON object");
      }
      const host = req.headers.host ?? "localhost";
      const ctx: RestContext = {
        params: match.params,
        query: url.searchParams,
        body: json,
        headers: req.headers,
        baseUrl: opts.publicBaseUrl ?? `http://${host}`,
      };
      result = route.kind === "document" ? await route.handler(ctx) : await callRpc(route, ctx, forwardHeaders(req, requestId));
    } catch (err) {
      result = errorResult(err, requestId);
    }
    result.headers = { "x-request-id": requestId, ...result.headers };
    send(res, result, req);
  };
}

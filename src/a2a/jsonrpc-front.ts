import { createClient, createRouterTransport } from "@connectrpc/connect";
import { Extensions } from "@a2a-js/sdk";
import { VersionNotSupportedError } from "@a2a-js/sdk/errors";
import { ServerCallContext, STATE_HEADERS_KEY } from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { PaymentService } from "../../gen/svc/payment/v1/payment_service_pb.js";
import type { Front, FrontDeps, FrontHandler } from "../fronts/agent-fronts.js";
import { agentCard } from "./agent-card.js";
import { AsyncTaskPoller } from "./async-task-poller.js";
import { SkuRequestHandler } from "./sku-request-handler.js";
import { BASE_URL_STATE_KEY, SkuTaskExecutor } from "./sku-task-executor.js";
import { DbTaskStore } from "./task-store.js";
import { EXTENSIONS_HEADER, LEGACY_EXTENSIONS_HEADER } from "./x402-extension.js";

// The A2A JSON-RPC endpoint (protocol 0.3: message/send, tasks/get, tasks/cancel) on the one port, at the
// exact path the agent card's `url` names. @a2a-js/sdk's request handler runs behind its v0.3
// compatibility transport; tasks live in the database. Streaming and push notifications are not offered.

export const A2A_JSONRPC_PATH = "/a2a/jsonrpc";

type Req = Parameters<FrontHandler>[0];
type Res = Parameters<FrontHandler>[1];

class BodyTooLarge extends Error {}

async function readBody(req: Req, limit: number): Promise<string> {
  if (Number(req.headers["content-length"] ?? "0") > limit) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: Res, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const rpcError = (code: number, message: string, id: unknown = null) => ({ jsonrpc: "2.0", id, error: { code, message } });

/** A2A-Version absent means 0.3 (A2A 1.0 §3.6.2); this endpoint speaks 0.3 only. */
const isV03 = (v: string | undefined) => v === undefined || /^0\.3(\.\d+)?$/.test(v.trim());

/**
 * A 0.3 message/send without `configuration.blocking` waits for the task to finish or ask for input,
 * as the 0.3 reference server did (the SDK's v0.3 translation would answer at once instead).
 */
function defaultToBlocking(body: unknown): void {
  const rpc = body as { method?: unknown; params?: { configuration?: { blocking?: unknown } } } | null;
  if (rpc?.method !== "message/send" || typeof rpc.params !== "object" || rpc.params === null) return;
  const configuration = rpc.params.configuration;
  if (configuration === undefined || configuration === null) rpc.params.configuration = { blocking: true };
  else if (typeof configuration === "object" && configuration.blocking === undefined) configuration.blocking = true;
}

export function a2aJsonRpcFront(deps: FrontDeps): Front {
  const { config, log, ds, gate, catalog } = deps;
  const store = new DbTaskStore(ds, config.jobResultRetentionMs);
  const payments = createClient(PaymentService, createRouterTransport(deps.routes));
  const poller = new AsyncTaskPoller(store, (jobId) => payments.getServiceResult({ jobId }), log);
  const executor = new SkuTaskExecutor({ gate, log, publicBaseUrl: config.publicBaseUrl });
  // The handler needs the card for its capabilities (required extensions, no streaming, no push); the
  // URLs in it are not used: the served card is built per request from its base URL.
  const card = parseLegacyAgentCard(agentCard(catalog.listServices(), config.publicBaseUrl ?? "http://localhost", deps.version));
  const transport = new LegacyJsonRpcTransportHandler(new SkuRequestHandler(card, store, executor, poller));

  const serve = async (req: Req, res: Res) => {
    if ((req.url ?? "").split("?")[0] !== A2A_JSONRPC_PATH) return send(res, 404, { error: { code: "not_found", message: `no route ${req.url}` } });
    if (req.method !== "POST") return send(res, 405, rpcError(-32600, "A2A JSON-RPC requests are POSTed"), { allow: "POST" });
    let body: string;
    try {
      body = await readBody(req, config.maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLarge) return send(res, 413, rpcError(-32600, `body_too_large: request body exceeds ${config.maxBodyBytes} bytes`));
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      return send(res, 200, rpcError(-32700, `invalid JSON: ${(err as Error).message}`));
    }
    const version = req.headers["a2a-version"] as string | undefined;
    if (!isV03(version)) {
      const id = typeof parsed === "object" && parsed !== null ? ((parsed as { id?: unknown }).id ?? null) : null;
      const err = LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(new VersionNotSupportedError(`A2A protocol version ${version} is not supported here; this endpoint speaks 0.3`));
      return send(res, 200, { jsonrpc: "2.0", id, error: err });
    }
    defaultToBlocking(parsed);
    const extensionsHeader = (req.headers[LEGACY_EXTENSIONS_HEADER] ?? req.headers[EXTENSIONS_HEADER]) as string | undefined;
    const context = new ServerCallContext({
      requestedExtensions: Extensions.parseServiceParameter(extensionsHeader),
      requestedVersion: "0.3",
      state: new Map<string, unknown>([
        [STATE_HEADERS_KEY, req.headers],
        [BASE_URL_STATE_KEY, `http://${req.headers.host ?? "localhost"}`],
      ]),
    });
    const out = await transport.handle(parsed as Record<string, unknown>, context);
    if (Symbol.asyncIterator in (out as object)) {
      // Unreachable while the card says streaming: false (the transport refuses streaming methods first).
      return send(res, 200, rpcError(-32004, "streaming is not supported"));
    }
    const headers: Record<string, string> = context.activatedExtensions?.length ? { "x-a2a-extensions": Extensions.toServiceParameter(context.activatedExtensions) } : {};
    send(res, 200, out, headers);
  };
  const handler: FrontHandler = (req, res) => {
    serve(req, res).catch((err) => {
      log.error({ err }, "A2A JSON-RPC request failed");
      if (!res.headersSent) send(res, 500, rpcError(-32603, "internal error"));
      else res.destroy();
    });
  };
  return { prefix: A2A_JSONRPC_PATH, handler };
}

import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import type { Config } from "../config.js";
import type { Logger } from "../platform/log.js";
import type { PaymentGate } from "../x402/payment-gate.js";
import type { CatalogServiceImpl } from "../catalog/catalog.service.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import type { SkuHandler } from "../skus/sku-handler.js";
import type { JobQueue } from "../jobs/job-queue.js";
import type { DataSource } from "typeorm";
import type { ConnectRouter } from "@connectrpc/connect";
import { mcpFront } from "../mcp/mcp-front.js";
import { a2aJsonRpcFront } from "../a2a/jsonrpc-front.js";

// The agent-native fronts (MCP tool server, A2A JSON-RPC, ...) served on the one port beside the REST
// shim: each owns a path prefix. They reuse the same services and the same payment gate: no second
// payment path exists.

/** A node request handler on the one port (HTTP/1.1 or h2c), as connect-node's fallback receives it. */
export type FrontHandler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;

export interface Front {
  /** Requests whose path starts with this prefix (e.g. `/mcp`) go to the front. */
  prefix: string;
  handler: FrontHandler;
}

export interface FrontDeps {
  config: Config;
  log: Logger;
  ds: DataSource;
  gate: PaymentGate;
  jobs: JobQueue;
  catalog: CatalogServiceImpl;
  skus: ReadonlyMap<string, SkuDefinition>;
  handlers: ReadonlyMap<string, SkuHandler<any>>;
  /** The Connect routes of every service, for fronts that call other RPCs in-process. */
  routes: (router: ConnectRouter) => void;
  version: string;
}

export function agentFronts(deps: FrontDeps): Front[] {
  return [mcpFront(deps), a2aJsonRpcFront(deps)];
}

/** Sends requests under a front's prefix to it, everything else to `fallback` (the REST shim). */
export function withFronts(fronts: readonly Front[], fallback: FrontHandler): FrontHandler {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const front = fronts.find((f) => path === f.prefix || path.startsWith(`${f.prefix}/`));
    return (front?.handler ?? fallback)(req, res);
  };
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Front, FrontDeps, FrontHandler } from "../fronts/agent-fronts.js";
import { freeTools } from "./free-tools.js";
import { buildMcpServer, mcpTools, type McpTools } from "./mcp-server.js";
import type { PaidCallContext } from "./paid-tools.js";
import { isSupportedProtocolVersion, MCP_PROTOCOL_VERSIONS } from "./protocol-versions.js";

// The MCP tool server at `/mcp`, Streamable HTTP, stateless: every POST gets its own server and
// transport (no session id, JSON responses, no server-initiated stream; GET and DELETE answer 405).
// A paid tool call runs through the same PaymentGate as HTTP, so its exactly-once guarantees hold.

export const MCP_PATH = "/mcp";

type NodeReq = Parameters<FrontHandler>[0];
type NodeRes = Parameters<FrontHandler>[1];

class BodyTooLarge extends Error {}

async function readBody(req: NodeReq, limit: number): Promise<string> {
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

/** A JSON-RPC error answered outside any MCP exchange, as the SDK's transport words them. */
function rpcError(res: NodeRes, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null });
  (res as ServerResponse).writeHead(status, { "content-type": "application/json", ...headers }).end(body);
}

export function mcpFront(deps: FrontDeps): Front {
  const free = freeTools(deps.routes);
  const paid: PaidCallContext = { gate: deps.gate, log: deps.log, publicBaseUrl: deps.config.publicBaseUrl };
  // Built at the first request: which SKUs are sold is fixed once the server is composed.
  let tools: McpTools | undefined;
  const publicOrigin = deps.config.publicBaseUrl ? new URL(deps.config.publicBaseUrl).origin : undefined;

  async function handle(req: NodeReq, res: NodeRes): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path !== MCP_PATH) return rpcError(res, 404, -32000, `no MCP endpoint at ${path}; the MCP server is at ${MCP_PATH}`);
    if (req.method !== "POST") return rpcError(res, 405, -32000, "Method not allowed: this MCP server is stateless; send JSON-RPC with POST", { allow: "POST" });
    // MCP requires the Origin check against DNS rebinding: only browsers send one, and the only page allowed is our own public origin.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== publicOrigin) return rpcError(res, 403, -32000, `Forbidden: Origin ${origin} is not allowed`);
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, deps.config.maxBodyBytes));
    } catch (err) {
      if (err instanceof BodyTooLarge) return rpcError(res, 413, -32000, `body_too_large: request body exceeds ${deps.config.maxBodyBytes} bytes`);
      return rpcError(res, 400, -32700, "Parse error: Invalid JSON");
    }
    const version = req.headers["mcp-protocol-version"];
    const initializing = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
    if (typeof version === "string" && !initializing && !isSupportedProtocolVersion(version)) {
      return rpcError(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${MCP_PROTOCOL_VERSIONS.join(", ")})`);
    }
    tools ??= mcpTools(deps.catalog, free);
    const server = buildMcpServer(tools, paid, deps.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    transport.onerror = (err) => deps.log.debug({ err }, "mcp transport error");
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req as IncomingMessage, res as ServerResponse, body);
  }

  return {
    prefix: MCP_PATH,
    handler: (req, res) => {
      handle(req, res).catch((err) => {
        deps.log.error({ err }, "mcp request failed");
        if (!res.headersSent) rpcError(res, 500, -32603, "Internal error");
      });
    },
  };
}

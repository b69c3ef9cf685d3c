import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { CatalogServiceImpl } from "../catalog/catalog.service.js";
import type { Logger } from "../platform/log.js";
import type { FreeTool } from "./free-tools.js";
import { callPaidTool, paidTool, TOOL_NAME, type PaidCallContext } from "./paid-tools.js";
import { MCP_SERVER_VERSION, negotiateProtocolVersion } from "./protocol-versions.js";
import { errorToolResult, toolErrorResult } from "./tool-results.js";

// One MCP server (the SDK's low-level Server: the tools publish the catalog's JSON Schemas verbatim,
// which McpServer's zod-based registration cannot). Stateless: a new one answers each HTTP request.

export const MCP_SERVER_NAME = "svc";

const CAPABILITIES = { tools: { listChanged: false } };

const INSTRUCTIONS =
  "Every SKU of the catalog is a paid tool named by its sku_id; the other tools are free. " +
  "A paid tool called without payment answers isError with the x402 PaymentRequired in structuredContent " +
  "(x402Version 2, resource mcp://tool/<name>, accepts[]): sign one of `accepts` and call again with the " +
  "PaymentPayload in params._meta[\"x402/payment\"]. The result carries the settlement in " +
  "_meta[\"x402/payment-response\"]; a payment is charged at most once, and sending it again returns the same result. " +
  "Async tools answer a job_id: poll it with get_result.";

export interface McpTools {
  /** Every tool, paid then free. */
  list(): Tool[];
  paid: ReadonlySet<string>;
  free: ReadonlyMap<string, FreeTool>;
  /** SKUs of the catalog that are not sold here (unavailable or retired): refused as the gate refuses them. */
  known: ReadonlySet<string>;
}

/** The tool set of this deployment: available SKUs (from the catalog) and the free tools. */
export function mcpTools(catalog: CatalogServiceImpl, free: FreeTool[]): McpTools {
  const services = catalog.listServices().services;
  const sold = services.filter((s) => s.available && !s.retired);
  for (const s of sold) if (!TOOL_NAME.test(s.skuId)) throw new Error(`SKU id ${s.skuId} is not a valid MCP tool name`);
  const tools = [...sold.map(paidTool), ...free.map((f) => f.tool)];
  return {
    list: () => tools,
    paid: new Set(sold.map((s) => s.skuId)),
    free: new Map(free.map((f) => [f.tool.name, f])),
    known: new Set(services.map((s) => s.skuId)),
  };
}

export function buildMcpServer(tools: McpTools, paid: PaidCallContext, log: Logger): Server {
  const server = new Server({ name: MCP_SERVER_NAME, title: "svc agent services", version: MCP_SERVER_VERSION }, { capabilities: CAPABILITIES, instructions: INSTRUCTIONS });
  // Replaces the SDK's initialize handler only to negotiate among the spec's three protocol versions.
  server.setRequestHandler(InitializeRequestSchema, (req) => ({
    protocolVersion: negotiateProtocolVersion(req.params.protocolVersion),
    capabilities: CAPABILITIES,
    serverInfo: { name: MCP_SERVER_NAME, title: "svc agent services", version: MCP_SERVER_VERSION },
    instructions: INSTRUCTIONS,
  }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const { name, arguments: args, _meta } = req.params;
    const headers = extra.requestInfo?.headers;
    // Catalog SKUs not sold here still reach the gate, which refuses them before any charge.
    if (tools.paid.has(name) || tools.known.has(name)) return callPaidTool(paid, name, args, _meta as Record<string, unknown> | undefined, headers);
    const free = tools.free.get(name);
    if (!free) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const parsed = free.input.safeParse(args ?? {});
    if (!parsed.success) {
      const fields = parsed.error.issues.map((i) => ({ field: i.path.join(".") || "(arguments)", description: i.message }));
      return errorToolResult("invalid_input", `invalid arguments for ${name}: ${fields.map((f) => `${f.field}: ${f.description}`).join("; ")}`, { httpStatus: 400, fields });
    }
    try {
      const value = await free.run(parsed.data);
      return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
    } catch (err) {
      return toolErrorResult(name, err, log);
    }
  });
  return server;
}

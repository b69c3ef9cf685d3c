import { toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import { PaymentRequiredSchema } from "../../gen/svc/payment/v1/x402_pb.js";
import { errorReason } from "../platform/rpc/errors.js";
import type { Logger } from "../platform/log.js";
import { httpStatusFor } from "../rest/status-table.js";

// Tool results of this server: a delivered value, the x402 MCP transport's payment-required result
// (coinbase/x402 specs/transports-v2/mcp.md), and refusals carrying the same reason code as HTTP.

/** `_meta` key of the PaymentPayload a client sends with `tools/call` (x402 MCP transport). */
export const X402_PAYMENT_META = "x402/payment";
/** `_meta` key of the settlement response on a paid result (x402 MCP transport). */
export const X402_PAYMENT_RESPONSE_META = "x402/payment-response";
/** `_meta` key of this server's call record: status, charged, payment proof, trust envelope, engine. */
export const SVC_CALL_META = "svc/call";

/** `mcp://tool/<name>`: the resource a tool's payment pays for. */
export const toolResourceUrl = (name: string) => `mcp://tool/${name}`;

/** A successful result: the value as structuredContent and as a JSON text block. */
export function structuredResult(value: JsonObject, meta?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value) }],
    structuredContent: value,
    ...(meta && Object.keys(meta).length ? { _meta: meta } : {}),
  };
}

/** A refusal or failure: `{error: {code, message, http_status, fields?}}`, isError true. */
export function errorToolResult(code: string, message: string, extra: { httpStatus?: number; fields?: JsonObject[]; charged?: boolean } = {}): CallToolResult {
  const error: JsonObject = { code, message };
  if (extra.httpStatus !== undefined) error.http_status = extra.httpStatus;
  if (extra.fields?.length) error.fields = extra.fields;
  const value: JsonObject = extra.charged === undefined ? { error } : { error, charged: extra.charged };
  return { isError: true, content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * The x402 MCP payment-required result: structuredContent is the PaymentRequired (its resource the
 * tool's `mcp://` URL), content[0].text the `{"x402/error": {code: 402, message, data}}` fallback.
 * A failed settlement's response rides along under `x402/payment-response`.
 */
export function paymentRequiredResult(toolName: string, required: JsonObject, message: string, failedSettlement?: JsonObject): CallToolResult {
  const resource = (required.resource ?? {}) as JsonObject;
  const data: JsonObject = { ...required, resource: { ...resource, url: toolResourceUrl(toolName) } };
  if (failedSettlement) data[X402_PAYMENT_RESPONSE_META] = failedSettlement;
  return {
    isError: true,
    structuredContent: data,
    content: [{ type: "text", text: JSON.stringify({ "x402/error": { code: 402, message, data } }) }],
  };
}

const INTERNAL = new Set([Code.Internal, Code.Unknown, Code.DataLoss]);

/**
 * Any error of a call as a tool result. An x402 challenge (payment_required, payment_failed,
 * payment_invalid, payment_reused) becomes the payment-required result; everything else a refusal with
 * its reason code and the HTTP status the REST API gives it. Internal errors are logged, never shown.
 */
export function toolErrorResult(toolName: string, err: unknown, log: Logger, failedSettlement?: JsonObject): CallToolResult {
  const ce = ConnectError.from(err);
  const reason = errorReason(ce);
  const required = ce.findDetails(PaymentRequiredSchema).find((d) => d.x402Version === 2);
  if (required) return paymentRequiredResult(toolName, toJson(PaymentRequiredSchema, required) as JsonObject, ce.rawMessage, failedSettlement);
  if (!reason && INTERNAL.has(ce.code)) {
    log.error({ err: ce.cause ?? ce, tool: toolName }, "mcp tool call failed");
    return errorToolResult("internal", "internal error", { httpStatus: 500 });
  }
  const fields = ce.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, description: v.description })));
  const code = reason ?? Code[ce.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  return errorToolResult(code, ce.rawMessage, { httpStatus: httpStatusFor(ce.code, reason), fields });
}

import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { CallServiceResponseSchema, type CallServiceResponse } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import { ExecutionMode, type Sku } from "../../gen/svc/catalog/v1/catalog_pb.js";
import type { PaymentGate } from "../x402/payment-gate.js";
import { encodeJsonHeader, X402_HEADERS } from "../x402/wire.js";
import type { Logger } from "../platform/log.js";
import { toLegacyJson } from "../rest/legacy-json.js";
import { JURISDICTION_HEADER } from "../policy/jurisdiction.js";
import { paidToolOutputSchema, PENDING_JOB_SCHEMA } from "./output-schemas.js";
import { errorToolResult, structuredResult, SVC_CALL_META, toolErrorResult, X402_PAYMENT_META, X402_PAYMENT_RESPONSE_META } from "./tool-results.js";

// Every SKU sold here is a paid tool named by its sku_id (SKU ids only use [a-z0-9._-], which MCP tool
// names allow, so no mapping is needed). A call goes through the one PaymentGate, exactly as an HTTP
// call does: the PaymentPayload from `_meta["x402/payment"]` becomes the payment header.

/** MCP's tool-name alphabet (SEP-986, as the SDK checks it). */
export const TOOL_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export const GET_RESULT_TOOL = "get_result";

export interface PaidCallContext {
  gate: PaymentGate;
  log: Logger;
  publicBaseUrl: string | undefined;
}

/** The HTTP request headers of the `tools/call` POST, as the SDK hands them over. */
export type RequestHeaders = Record<string, string | string[] | undefined>;

const header = (h: RequestHeaders | undefined, name: string): string | undefined => {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The tool of a SKU available on this deployment. */
export function paidTool(sku: Sku): Tool {
  const async = sku.mode === ExecutionMode.ASYNC;
  const how = async
    ? " Paid over MCP with x402: an unpaid call answers the PaymentRequired (isError, structuredContent); retry with the PaymentPayload in params._meta[\"x402/payment\"]. Answers the pending job; poll it with get_result."
    : " Paid over MCP with x402: an unpaid call answers the PaymentRequired (isError, structuredContent); retry with the PaymentPayload in params._meta[\"x402/payment\"]. Answers the deliverable.";
  return {
    name: sku.skuId,
    title: sku.name,
    description: sku.description + how,
    inputSchema: sku.inputSchema as Tool["inputSchema"],
    outputSchema: paidToolOutputSchema(async ? PENDING_JOB_SCHEMA : ((sku.outputSchema ?? { type: "object" }) as JsonObject)) as Tool["outputSchema"],
    annotations: { title: sku.name, openWorldHint: true },
    _meta: {
      "svc/sku": {
        sku_id: sku.skuId,
        family: sku.family,
        mode: async ? "async" : "sync",
        price_amount: sku.priceAmount ?? null,
        asset: sku.payment?.asset ?? "USDC",
        network: sku.payment?.network ?? "",
        onboarding_required: sku.onboardingRequired,
        http_path: sku.path,
      },
    },
  };
}

/** One `tools/call` of a paid tool: the gate decides, charges at most once, and answers. */
export async function callPaidTool(
  ctx: PaidCallContext,
  skuId: string,
  args: Record<string, unknown> | undefined,
  meta: Record<string, unknown> | undefined,
  headers: RequestHeaders | undefined,
): Promise<CallToolResult> {
  const payment = meta?.[X402_PAYMENT_META];
  const responseHeaders = new Map<string, string>();
  try {
    const res = await ctx.gate.call(
      {
        skuId,
        input: (args ?? {}) as JsonObject,
        paymentHeader: payment === undefined ? undefined : encodeJsonHeader(payment as JsonValue),
        authorization: header(headers, "authorization"),
        baseUrl: ctx.publicBaseUrl ?? `http://${header(headers, "host") ?? "localhost"}`,
        jurisdiction: header(headers, JURISDICTION_HEADER),
      },
      (name, value) => responseHeaders.set(name.toLowerCase(), value),
    );
    return callResult(res, settlementOf(responseHeaders));
  } catch (err) {
    return toolErrorResult(skuId, err, ctx.log, settlementOf(responseHeaders));
  }
}

/** The settle response the gate put in its receipt header (v2 `PAYMENT-RESPONSE`, v1 `X-PAYMENT-RESPONSE`). */
function settlementOf(headers: Map<string, string>): JsonObject | undefined {
  const value = headers.get(X402_HEADERS.paymentResponse) ?? headers.get(X402_HEADERS.xPaymentResponse);
  return value === undefined ? undefined : (JSON.parse(Buffer.from(value, "base64").toString("utf8")) as JsonObject);
}

function callResult(res: CallServiceResponse, settlement: JsonObject | undefined): CallToolResult {
  const { deliverable: _deliverable, ...record } = toLegacyJson(CallServiceResponseSchema, res);
  const meta: Record<string, unknown> = { [SVC_CALL_META]: record };
  if (settlement) meta[X402_PAYMENT_RESPONSE_META] = settlement;
  switch (res.status) {
    case CallStatus.DELIVERED:
      return structuredResult(res.deliverable ?? {}, meta);
    case CallStatus.PENDING:
      return structuredResult(
        {
          sku_id: res.skuId,
          status: "pending",
          job_id: res.jobId,
          poll_url: res.pollUrl,
          poll: { tool: GET_RESULT_TOOL, arguments: { job_id: res.jobId } },
          charged: res.charged,
        },
        meta,
      );
    case CallStatus.INSUFFICIENT_SUBJECT:
      // The subject cannot be resolved: no challenge was issued and nothing was charged (HTTP answers 200 with this status).
      return errorToolResult("insufficient_subject", res.reason, { charged: false });
    default:
      return errorToolResult("service_failed", res.reason || `the call ended ${CallStatus[res.status]}`, { httpStatus: 503 });
  }
}

import type { JsonObject } from "@bufbuild/protobuf";

// The `outputSchema` of each paid tool. MCP requires every `structuredContent` of a tool with an output
// schema to match it, and the official client checks error results too, so the schema is the union of
// what a call can answer: the deliverable (or, for an async SKU, the pending job), the x402
// PaymentRequired of an unpaid call, and a refusal.

/** x402 v2 PaymentRequired, as the x402 MCP transport puts it in `structuredContent`. */
export const PAYMENT_REQUIRED_SCHEMA: JsonObject = {
  type: "object",
  description: "x402 PaymentRequired (isError true): pay one of `accepts` and retry with params._meta[\"x402/payment\"]",
  properties: {
    x402Version: { type: "integer" },
    error: { type: "string" },
    resource: { type: "object", properties: { url: { type: "string" }, description: { type: "string" }, mimeType: { type: "string" } } },
    accepts: { type: "array", items: { type: "object" } },
    "x402/payment-response": { type: "object", description: "the failed settlement, when settlement failed" },
  },
  required: ["x402Version", "accepts"],
};

/** A refusal or failure: nothing delivered. `code` is the machine reason the HTTP API also answers. */
export const TOOL_ERROR_SCHEMA: JsonObject = {
  type: "object",
  description: "A refusal or failure (isError true)",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        http_status: { type: "integer", description: "the status the HTTP API answers for the same refusal" },
        fields: { type: "array", items: { type: "object", properties: { field: { type: "string" }, description: { type: "string" } } } },
      },
      required: ["code", "message"],
    },
    charged: { type: "boolean" },
  },
  required: ["error"],
};

/** The answer of a paid call to an async SKU: the job to poll with the free tool `get_result`. */
export const PENDING_JOB_SCHEMA: JsonObject = {
  type: "object",
  description: "The accepted job of an async SKU: poll it with the tool get_result",
  properties: {
    sku_id: { type: "string" },
    status: { type: "string", const: "pending" },
    job_id: { type: "string" },
    poll_url: { type: "string" },
    poll: {
      type: "object",
      properties: { tool: { type: "string", const: "get_result" }, arguments: { type: "object", properties: { job_id: { type: "string" } }, required: ["job_id"] } },
      required: ["tool", "arguments"],
    },
    charged: { type: "boolean" },
  },
  required: ["status", "job_id", "poll"],
};

/** `{type: object, anyOf: [success, PaymentRequired, error]}`, with the success schema's `$defs` kept at the root so its refs resolve. */
export function paidToolOutputSchema(success: JsonObject): JsonObject {
  const { $defs, definitions, ...branch } = success;
  return {
    type: "object",
    anyOf: [branch, PAYMENT_REQUIRED_SCHEMA, TOOL_ERROR_SCHEMA],
    ...($defs ? { $defs } : {}),
    ...(definitions ? { definitions } : {}),
  };
}

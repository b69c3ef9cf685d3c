import type { JsonObject } from "@bufbuild/protobuf";
import type { Message } from "@a2a-js/sdk";
import { X402_META } from "./x402-extension.js";

// What a client's A2A message asks for. The first message of a task names the SKU in a data part
// `{"sku_id": "<sku>", "input": {...}}` (`input` defaults to `{}`); a later message on the same task
// carries the payment in its metadata under `x402.payment.payload`, or declines with
// `x402.payment.status: "payment-rejected"`.

export type SkuCallRequest = { ok: true; skuId: string; input: JsonObject } | { ok: false; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function skuCallOf(message: Message): SkuCallRequest {
  for (const part of message.parts ?? []) {
    if (part.content?.$case !== "data" || !isObject(part.content.value) || !("sku_id" in part.content.value)) continue;
    const { sku_id, input } = part.content.value;
    if (typeof sku_id !== "string" || sku_id === "") return { ok: false, message: "sku_id must be a non-empty string" };
    if (input !== undefined && !isObject(input)) return { ok: false, message: "input must be a JSON object" };
    return { ok: true, skuId: sku_id, input: (input ?? {}) as JsonObject };
  }
  return { ok: false, message: 'the message names no SKU: send a data part {"sku_id": "<sku>", "input": {...}}' };
}

export type PaymentReply = { kind: "payload"; payload: unknown } | { kind: "rejected" } | { kind: "none" };

export function paymentReplyOf(message: Message): PaymentReply {
  const meta = message.metadata ?? {};
  if (meta[X402_META.payload] !== undefined && meta[X402_META.payload] !== null) return { kind: "payload", payload: meta[X402_META.payload] };
  if (meta[X402_META.status] === "payment-rejected") return { kind: "rejected" };
  return { kind: "none" };
}

/** The x402 payment header value the payment gate reads: standard base64 of the payload's JSON (a string is taken as that header already). */
export function paymentHeaderOf(payload: unknown): string {
  return typeof payload === "string" ? payload : Buffer.from(JSON.stringify(payload), "utf8").toString("base64");
}

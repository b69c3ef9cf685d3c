import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { PaymentPayloadSchema, type PaymentPayload, type PaymentRequired, PaymentRequiredSchema, type SettleResponse, SettleResponseSchema } from "../../gen/svc/payment/v1/x402_pb.js";

// x402 header codec: standard base64 of UTF-8 JSON, as @x402/core and x402 v1 write it.

export const X402_HEADERS = {
  paymentRequired: "payment-required",
  paymentSignature: "payment-signature",
  xPayment: "x-payment",
  paymentResponse: "payment-response",
  xPaymentResponse: "x-payment-response",
} as const;

/** Largest payment header accepted; a real one is under 2 KB. */
export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class PaymentDecodeError extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

export function encodeJsonHeader(value: JsonValue): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

export function encodePaymentRequired(pr: PaymentRequired): string {
  return encodeJsonHeader(toJson(PaymentRequiredSchema, pr));
}

export function encodeSettleResponse(sr: SettleResponse): string {
  return encodeJsonHeader(toJson(SettleResponseSchema, sr, { alwaysEmitImplicit: true }));
}

/** Decodes a `PAYMENT-SIGNATURE` / `X-PAYMENT` header; every failure is a PaymentDecodeError. */
export function decodePaymentHeader(value: string): PaymentPayload {
  if (value.length > MAX_PAYMENT_HEADER_BYTES) throw new PaymentDecodeError("invalid_payload", `payment header exceeds ${MAX_PAYMENT_HEADER_BYTES} bytes`);
  const text = value.trim();
  if (!BASE64.test(text) || text.length === 0) throw new PaymentDecodeError("invalid_payload", "payment header is not standard base64");
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, "base64").toString("utf8"));
  } catch {
    throw new PaymentDecodeError("invalid_payload", "payment header is not base64 of JSON");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new PaymentDecodeError("invalid_payload", "payment header JSON is not an object");
  const version = (json as { x402Version?: unknown }).x402Version;
  if (version !== 1 && version !== 2) throw new PaymentDecodeError("invalid_x402_version", "x402Version must be 1 or 2");
  let payload: PaymentPayload;
  try {
    payload = fromJson(PaymentPayloadSchema, json as JsonValue, { ignoreUnknownFields: true });
  } catch (err) {
    throw new PaymentDecodeError("invalid_payload", `payment payload is malformed: ${(err as Error).message}`);
  }
  const auth = payload.payload?.authorization;
  if (!payload.payload?.signature || !auth?.from || !auth.nonce) throw new PaymentDecodeError("invalid_payload", "payment payload lacks signature or authorization");
  return payload;
}

// The a2a-x402 extension v0.2 (standalone flow): its URI, the message-metadata keys that carry the
// payment, and the payment statuses. The payment itself always goes through the one payment gate.

export const X402_EXTENSION_URI = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";

/** The v0.3 activation header (v1.0 spells it `A2A-Extensions`; both are read). */
export const LEGACY_EXTENSIONS_HEADER = "x-a2a-extensions";
export const EXTENSIONS_HEADER = "a2a-extensions";

export const X402_META = {
  status: "x402.payment.status",
  /** Agent -> client: the x402 PaymentRequired (the same v2 challenge the HTTP 402 carries). */
  required: "x402.payment.required",
  /** Client -> agent: the signed x402 PaymentPayload. */
  payload: "x402.payment.payload",
  /** Agent -> client: every settle response of the task, in order. */
  receipts: "x402.payment.receipts",
  error: "x402.payment.error",
} as const;

export type X402PaymentStatus =
  | "payment-required"
  | "payment-submitted"
  | "payment-rejected"
  | "payment-verified"
  | "payment-completed"
  | "payment-failed";

/** This service's own keys (task and message metadata). */
export const SVC_META = {
  skuId: "svc.sku_id",
  input: "svc.input",
  jobId: "svc.job_id",
  charged: "svc.charged",
  /** Why an uncharged call was not charged (a comped audit...). */
  reason: "svc.reason",
  /** `{code, message, fields?}` of a refusal or failure. */
  error: "svc.error",
  /** The state-transition history: `[{state, timestamp, payment_status?}]`, oldest first. */
  transitions: "svc.state_transitions",
  /** Set on the status message of each transition: the 0.3 state it entered. */
  state: "svc.state",
  refundTxHash: "svc.refund_tx_hash",
} as const;

import type { Hex } from "viem";
import type { GetSupportedResponse } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "../../gen/svc/payment/v1/x402_pb.js";

// A facilitator verifies x402 payments and settles them on-chain: the built-in one, or a remote one
// over the x402 facilitator HTTP API.

export interface SettleHooks {
  /**
   * Called once the settlement transaction is broadcast, before its receipt (crash recovery), with the
   * payment's index when the transaction is a batch (null when it settles this payment alone).
   */
  onSubmitted?(txHash: Hex, batchIndex?: number | null): Promise<void> | void;
}

export interface Facilitator {
  readonly kind: "built-in" | "remote";
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements, hooks?: SettleHooks): Promise<SettleResponse>;
  supported(): Promise<GetSupportedResponse>;
}

/** The facilitator could not give an answer (timeout, 5xx, malformed reply): nothing is known to have moved. */
export class FacilitatorUnavailableError extends Error {
  constructor(message: string, readonly ambiguous: boolean) {
    super(message);
  }
}

/** Reason codes, as @x402/evm names them (treated as opaque strings by clients). */
export const REASON = {
  scheme: "invalid_exact_evm_scheme",
  network: "invalid_exact_evm_network_mismatch",
  missingDomain: "invalid_exact_evm_missing_eip712_domain",
  assetMismatch: "invalid_exact_evm_asset_mismatch",
  tokenName: "invalid_exact_evm_token_name_mismatch",
  tokenVersion: "invalid_exact_evm_token_version_mismatch",
  parse: "invalid_exact_evm_failed_to_parse_signature",
  signature: "invalid_exact_evm_signature",
  recipient: "invalid_exact_evm_recipient_mismatch",
  validBefore: "invalid_exact_evm_payload_authorization_valid_before",
  validAfter: "invalid_exact_evm_payload_authorization_valid_after",
  value: "invalid_exact_evm_payload_authorization_value_mismatch",
  nonceUsed: "invalid_exact_evm_nonce_already_used",
  balance: "invalid_exact_evm_insufficient_balance",
  txFailed: "invalid_exact_evm_transaction_failed",
  transferEvent: "invalid_exact_evm_transfer_event_mismatch",
  unexpectedSettle: "unexpected_settle_error",
  invalidRequirements: "invalid_payment_requirements",
} as const;

import { Code } from "@connectrpc/connect";

// The one table that turns an RPC error into the spec's HTTP status: first by ErrorInfo reason,
// then by code. Connect's own mapping (FailedPrecondition -> 400) is for Connect clients; the
// REST statuses are a contract of the spec.

export const STATUS_BY_REASON: Readonly<Record<string, number>> = {
  payment_required: 402,
  payment_failed: 402,
  note_unfunded: 402,
  payment_invalid: 400,
  payment_reused: 402,
  payment_in_progress: 409,
  sku_not_found: 404,
  job_not_found: 404,
  result_expired: 404,
  proof_not_found: 404,
  seal_not_found: 404,
  faucet_unavailable: 404,
  facilitator_api_closed: 403,
  not_your_agent: 403,
  name_taken: 409,
  not_a_note: 400,
  identity_not_controlled: 403,
  identity_not_found: 404,
  identity_linked_elsewhere: 409,
  onboarding_required: 409,
  own_request: 403,
  not_a_party: 403,
  operator_api_closed: 403,
  request_closed: 409,
  request_expired: 409,
  job_not_assigned: 409,
  bid_exists: 409,
  bid_not_found: 404,
  payout_not_found: 404,
  empty_result: 400,
  invalid_json: 400,
  kit_version_invalid: 400,
  auth_required: 401,
  requester_id_mismatch: 403,
  agent_name_mismatch: 403,
  not_assigned_provider: 403,
  request_not_found: 404,
  not_registered: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
};

export const STATUS_BY_CODE: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  // Gate refusals (trust tier, breaker, policy): the spec answers 409 and charges nothing.
  [Code.FailedPrecondition]: 409,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusFor(code: Code, reason: string | undefined): number {
  return (reason !== undefined ? STATUS_BY_REASON[reason] : undefined) ?? STATUS_BY_CODE[code] ?? 500;
}

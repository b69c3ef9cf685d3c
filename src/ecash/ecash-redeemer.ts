import type { EntityManager } from "typeorm";

// The one way ecash enters the service: a Cashu token from an `X-402-Payment` or `X-Cashu` header is
// redeemed (mint on the operator's allowlist, unit and amount checked, proofs swapped at the mint for
// fresh ones the service holds, persisted before the answer, duplicates refused). Markets stakes and
// per-call fees call this; nothing else reads tokens.

export interface RedeemRequest {
  /** The serialized token (cashuA… / cashuB…) as the header carried it. */
  token: string;
  /** The least the token must be worth, in `unit`. */
  minAmount: bigint;
  unit: "sat";
  /** What the redemption pays for (a stake, a call), recorded with it. */
  purpose: string;
}

export interface Redemption {
  redemptionId: string;
  mint: string;
  unit: "sat";
  /** The token's full value (what the service received). */
  amount: bigint;
}

export interface EcashRedeemer {
  /** Redeems a token; throws a ConnectError with a reason code (ecash_mint_not_allowed, ecash_spent, ecash_insufficient...) otherwise. */
  redeem(req: RedeemRequest, manager?: EntityManager): Promise<Redemption>;
}

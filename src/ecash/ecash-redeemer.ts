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
  /** The token's full value. */
  amount: bigint;
  /** The mint's input fee (NUT-02) the swap paid out of the token. */
  fee: bigint;
  /** What the service now holds: amount - fee (at least the request's minAmount). */
  received: bigint;
}

export interface EcashRedeemer {
  /**
   * Redeems a token; throws a ConnectError with a reason code otherwise: ecash_disabled (409, no mint
   * configured), ecash_invalid (400, malformed or refused by the mint), ecash_mint_not_allowed (400),
   * ecash_wrong_unit (400), ecash_insufficient (400), ecash_spent (409), ecash_mint_unavailable (503,
   * nothing taken: retry with the same token).
   *
   * Without `manager` the redemption commits its own transactions (claim before the swap, result
   * after), and a swap whose answer was lost is resumed by the same token. With `manager` every write
   * joins the caller's transaction (so a stake and its redemption commit together), which stays open
   * while the mint is asked, and a crash mid-swap leaves nothing to resume: prefer calling without it
   * and recording the stake with `redemptionId` afterwards.
   */
  redeem(req: RedeemRequest, manager?: EntityManager): Promise<Redemption>;
}

import type { EntityManager } from "typeorm";
import { accountBalance, postEntry, type Posting } from "../ledger/ledger.js";

// The markets API's money moves, in sats (every account here is a sat account; USD-priced calls are
// x402 sales the payment gate books in USDC). Each move is one balanced journal entry:
//   market created      subsidy expense -> market pool (ceil(b ln 2))
//   ecash stake         ecash held -> fee revenue (fee minus revenue share) + operator balance (share) + market pool (stake)
//   balance stake       agent balance -> the same
//   market resolved     market pool -> winners' balances (payouts) + maker result (the rest)
//   ecash plan          ecash held -> plan revenue (price) + agent balance (change)
//   balance plan        agent balance -> plan revenue
//   ecash credit        ecash held -> agent balance (a token redeemed for a stake or plan that could not be applied)

export const MARKETS_ACCOUNTS = {
  /** Ecash the service holds (redeemed at the mint), sats. */
  ecash: "asset:ecash_sat",
  /** A market's pool: subsidy plus stakes after fees, until resolution. */
  pool: (marketId: string) => `liability:market_pool_sat:${marketId}`,
  /** What the service owes an agent in the markets API (winnings, change, revenue share), sats. */
  balance: (agentId: string) => `liability:markets_balance_sat:${agentId}`,
  fees: "revenue:markets_fee_sat",
  plans: "revenue:markets_plans_sat",
  /** What market makers kept at resolution (pool minus payouts). */
  maker: "revenue:markets_maker_sat",
  subsidy: "expense:markets_subsidy_sat",
} as const;

/** What a liability account holds (its credit balance, positive). */
export async function heldSats(m: EntityManager, account: string): Promise<bigint> {
  return -(await accountBalance(m, account));
}

export const balanceOf = (m: EntityManager, agentId: string) => heldSats(m, MARKETS_ACCOUNTS.balance(agentId));

export function fundMarket(m: EntityManager, marketId: string, subsidy: bigint) {
  return postEntry(m, "market_create", marketId, [
    { account: MARKETS_ACCOUNTS.subsidy, amount: subsidy },
    { account: MARKETS_ACCOUNTS.pool(marketId), amount: -subsidy },
  ]);
}

export interface StakeMoney {
  positionId: string;
  marketId: string;
  agentId: string;
  paid: bigint;
  fee: bigint;
  feeShare: bigint;
  fleetOperatorId: string | null;
  stake: bigint;
  paidWith: "ecash" | "balance";
}

export function bookStake(m: EntityManager, s: StakeMoney) {
  const postings: Posting[] = [
    { account: s.paidWith === "ecash" ? MARKETS_ACCOUNTS.ecash : MARKETS_ACCOUNTS.balance(s.agentId), amount: s.paid },
    { account: MARKETS_ACCOUNTS.fees, amount: -(s.fee - s.feeShare) },
    { account: MARKETS_ACCOUNTS.pool(s.marketId), amount: -s.stake },
  ];
  if (s.feeShare > 0n && s.fleetOperatorId) postings.push({ account: MARKETS_ACCOUNTS.balance(s.fleetOperatorId), amount: -s.feeShare });
  return postEntry(m, "market_stake", s.positionId, postings);
}

export function bookResolution(m: EntityManager, marketId: string, pool: bigint, payouts: Map<string, bigint>) {
  let paid = 0n;
  const postings: Posting[] = [{ account: MARKETS_ACCOUNTS.pool(marketId), amount: pool }];
  for (const [agentId, amount] of payouts) {
    postings.push({ account: MARKETS_ACCOUNTS.balance(agentId), amount: -amount });
    paid += amount;
  }
  postings.push({ account: MARKETS_ACCOUNTS.maker, amount: -(pool - paid) });
  return postEntry(m, "market_resolve", marketId, postings);
}

export function bookPlan(m: EntityManager, subscriptionId: string, agentId: string, paid: bigint, price: bigint, paidWith: "ecash" | "balance") {
  return postEntry(m, "market_plan", subscriptionId, [
    { account: paidWith === "ecash" ? MARKETS_ACCOUNTS.ecash : MARKETS_ACCOUNTS.balance(agentId), amount: paid },
    { account: MARKETS_ACCOUNTS.plans, amount: -price },
    { account: MARKETS_ACCOUNTS.balance(agentId), amount: -(paid - price) },
  ]);
}

export function bookCredit(m: EntityManager, redemptionId: string, agentId: string, amount: bigint) {
  return postEntry(m, "market_ecash_credit", redemptionId, [
    { account: MARKETS_ACCOUNTS.ecash, amount },
    { account: MARKETS_ACCOUNTS.balance(agentId), amount: -amount },
  ]);
}

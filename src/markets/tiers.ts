import { usdToAtomic } from "../platform/money.js";

// The markets API's plans (spec, Authentication item 7). Every registered agent is an Explorer; a paid
// month of Contributor or Operator (in ecash sats) raises its tier, the Compliance API plan (99 USD a
// month through x402) covers compliance checks. A plan lasts 30 days from its purchase, or from the end
// of the same plan's current period when bought again.

export type Tier = "explorer" | "contributor" | "operator";
export type Plan = "contributor" | "operator" | "compliance";

export const PLANS: readonly Plan[] = ["contributor", "operator", "compliance"];

export interface TierRules {
  /** Calls per UTC day; undefined means unlimited. */
  dailyLimit: number | undefined;
  /** May stake on markets ("market posting"). Explorer is read-only. */
  canStake: boolean;
  /** May read signals. */
  signals: boolean;
  /** Earns the revenue share of its fleet's stake fees. */
  revenueShare: boolean;
}

export const TIERS: Readonly<Record<Tier, TierRules>> = {
  explorer: { dailyLimit: 10, canStake: false, signals: false, revenueShare: false },
  contributor: { dailyLimit: 100, canStake: true, signals: true, revenueShare: false },
  operator: { dailyLimit: undefined, canStake: true, signals: true, revenueShare: true },
};

/** Monthly prices of the ecash plans, in sats. */
export const PLAN_PRICE_SATS: Readonly<Record<Exclude<Plan, "compliance">, bigint>> = {
  contributor: 10_000n,
  operator: 50_000n,
};

/** The Compliance API: 0.50 USD per check, or 99 USD per month (atomic USDC). */
export const COMPLIANCE_PRICE = {
  perCall: usdToAtomic("0.50"),
  monthly: usdToAtomic("99"),
};

/** An agent proof: 0.001 USD each. */
export const AGENT_PROOF_PRICE = usdToAtomic("0.001");

export const PLAN_PERIOD_MS = 30 * 24 * 3600 * 1000;

/** Share of the stake fees paid by an Operator's fleet members credited to the Operator, basis points. */
export const REVENUE_SHARE_BPS = 2000;

/** Stake fee: 0.5 percent of the stake, rounded up to a whole sat. */
export const STAKE_FEE_BPS = 50;

export function stakeFee(paid: bigint): bigint {
  return (paid * BigInt(STAKE_FEE_BPS) + 9_999n) / 10_000n;
}

export const MIN_STAKE_SATS = 100n;
export const MAX_STAKE_SATS = 100_000_000n;

/** The highest tier among the plans active now. */
export function tierOf(activePlans: ReadonlySet<Plan>): Tier {
  if (activePlans.has("operator")) return "operator";
  if (activePlans.has("contributor")) return "contributor";
  return "explorer";
}

import { FEE_SCHEDULE } from "./fee-schedule.js";

// The marketplace fee engine (spec: Fees). Mode `shadow`: the fee charged is the service rate; the
// dynamic fee the schedule would charge is computed and disclosed beside it. The fee always comes out
// of the provider's payout; the buyer pays the listed price only.

export type Badge = "gold" | "silver" | "bronze" | "registered" | "none";

export interface FeeInputs {
  /** Badges; undefined when the reputation input is unavailable. */
  providerBadge: Badge | undefined;
  requesterBadge: Badge | undefined;
  /** Jobs this requester and provider completed together before this one; undefined when unavailable. */
  completedPairJobs: number | undefined;
  /** Days since the requester (buyer) registered; undefined when unavailable. */
  buyerTenureDays: number | undefined;
  requesterRegistered: boolean;
  providerRegistered: boolean;
  /** Internal identities (the service's own agents) never receive a discount. */
  providerInternal: boolean;
  requesterInternal: boolean;
}

export interface FeeQuote {
  mode: string;
  /** The fee charged, basis points. */
  chargedBps: number;
  /** What the dynamic schedule gives, basis points (disclosed in shadow mode). */
  dynamicBps: number;
  /** Each adjustment applied to the service rate, for disclosure. */
  adjustments: Record<string, number>;
  /** Trust inputs that were unavailable (the dynamic fee is then the service rate). */
  unavailable: string[];
}

function tier(table: readonly { threshold: number; adjustmentBps: number }[], value: number): number {
  let adj = 0;
  for (const t of table) if (value >= t.threshold) adj = t.adjustmentBps;
  return adj;
}

const badgeAdj = (table: Record<string, number>, badge: Badge) => table[badge] ?? 0;

export function quoteFee(i: FeeInputs): FeeQuote {
  const f = FEE_SCHEDULE;
  const unavailable = (
    [
      ["provider_badge", i.providerBadge],
      ["requester_badge", i.requesterBadge],
      ["pair_history", i.completedPairJobs],
      ["buyer_tenure", i.buyerTenureDays],
    ] as const
  )
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  const charged = f.serviceRateBps;
  if (unavailable.length) return { mode: f.mode, chargedBps: charged, dynamicBps: f.serviceRateBps, adjustments: {}, unavailable };

  const adjustments: Record<string, number> = {
    provider_badge: badgeAdj(f.providerBadgeAdjustmentBps, i.providerBadge!),
    requester_badge: badgeAdj(f.requesterBadgeAdjustmentBps, i.requesterBadge!),
    repeat_pair: tier(f.repeatPair, i.completedPairJobs!),
    buyer_tenure: tier(f.buyerTenureDays, i.buyerTenureDays!),
    unregistered_requester: i.requesterRegistered ? 0 : f.unregisteredRequesterBps,
    unregistered_provider: i.providerRegistered ? 0 : f.unregisteredProviderBps,
    first_time_pair: i.completedPairJobs === 0 ? f.firstTimePairBps : 0,
  };
  if (i.providerInternal || i.requesterInternal) {
    for (const k of Object.keys(adjustments)) if (adjustments[k]! < 0) adjustments[k] = 0; // never a discount
  }
  const raw = f.serviceRateBps + Object.values(adjustments).reduce((s, v) => s + v, 0);
  const dynamic = Math.min(f.ceilingBps, Math.max(f.floorBps, raw));
  return { mode: f.mode, chargedBps: f.mode === "shadow" ? charged : dynamic, dynamicBps: dynamic, adjustments, unavailable: [] };
}

/** The fee on `amount` at `bps`, floored to the atomic unit; the provider receives the rest. */
export function applyFee(amount: bigint, bps: number): { fee: bigint; net: bigint } {
  const fee = (amount * BigInt(bps)) / 10_000n;
  return { fee, net: amount - fee };
}

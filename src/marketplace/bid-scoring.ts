// Weights for ranking competing bids (spec: Bid scoring weights). A buyer may accept any bid directly.
export const BID_SCORING_WEIGHTS = { reputation: 0.45, price: 0.3, speed: 0.15, match: 0.1 } as const;

export interface BidFacts {
  /** Provider reputation total, 0 to 100. */
  reputation: number;
  /** Bid price and request budget, atomic units; a bid without price asks for the budget. */
  price: bigint | null;
  budget: bigint;
  /** Estimated seconds to deliver; null when not stated. */
  etaSeconds: number | null;
  capabilityMatches: boolean;
}

/**
 * Ranking score in [0, 1]: 0.45 reputation/100 + 0.3 (1 - price/budget) + 0.15 (1 / (1 + eta/1 h))
 * + 0.1 match. A bid without a price counts as asking for the whole budget; without an eta, as 24 h.
 */
export function scoreBid(f: BidFacts): number {
  const w = BID_SCORING_WEIGHTS;
  const price = f.budget > 0n ? Math.min(1, Number(f.price ?? f.budget) / Number(f.budget)) : 1;
  const eta = f.etaSeconds ?? 24 * 3600;
  const score = w.reputation * Math.min(1, f.reputation / 100) + w.price * (1 - price) + w.speed * (1 / (1 + eta / 3600)) + w.match * (f.capabilityMatches ? 1 : 0);
  return Math.round(score * 10_000) / 10_000;
}

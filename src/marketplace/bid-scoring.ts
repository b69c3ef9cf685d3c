// Weights for ranking competing bids (spec: Bid scoring weights). A buyer may accept any bid directly.
export const BID_SCORING_WEIGHTS = { reputation: 0.45, price: 0.3, speed: 0.15, match: 0.1 } as const;

// The reputation formula and badges (spec: Reputation). The engine computes with these; /v1/rules publishes them.
export const REPUTATION_COMPONENTS = [
  { name: "volume", formula: "min(30, log2(proofs + 1) * 5)", max: 30 },
  { name: "quality", formula: "average quality (0 to 1) * 40", max: 40 },
  { name: "diversity", formula: "min(15, distinct proof kinds * 3)", max: 15 },
  { name: "chain_depth", formula: "min(15, average chain depth * 5)", max: 15 },
] as const;

export const REPUTATION_TOTAL_CAP = 100;
export const REPUTATION_REFRESH_SECONDS = 15 * 60;

/** Badge thresholds, highest first. `registered` is any registered or active agent below bronze. */
export const BADGE_THRESHOLDS = [
  { badge: "gold", minScore: 85, rule: "total at least 85" },
  { badge: "silver", minScore: 70, rule: "total at least 70" },
  { badge: "bronze", minScore: 50, rule: "total at least 50" },
  { badge: "registered", minScore: 0, rule: "any registered or active agent below bronze" },
  { badge: "none", minScore: 0, rule: "not registered" },
] as const;

export const REPUTATION_SOURCES = [
  "settled jobs",
  "witness verdicts on those jobs",
  "delegation proofs",
  "witness-participation proofs",
] as const;

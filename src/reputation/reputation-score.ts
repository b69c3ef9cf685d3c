import { BADGE_THRESHOLDS, REPUTATION_TOTAL_CAP } from "./reputation-rules.js";

// The spec's reputation formula. Inputs come only from verifiable records; nothing is seeded.

export interface ReputationInputs {
  /** Proof records credited to the agent. */
  proofs: number;
  /** Average quality of its credited work, 0 to 1 (0 when nothing was judged). */
  averageQuality: number;
  /** Distinct proof kinds among them. */
  distinctKinds: number;
  /** Average delegation chain depth. */
  averageChainDepth: number;
}

export interface ReputationScore {
  volume: number;
  quality: number;
  diversity: number;
  chain_depth: number;
  total: number;
  badge: string;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function reputationScore(i: ReputationInputs, registered: boolean): ReputationScore {
  const volume = Math.min(30, Math.log2(i.proofs + 1) * 5);
  const quality = Math.max(0, Math.min(1, i.averageQuality)) * 40;
  const diversity = Math.min(15, i.distinctKinds * 3);
  const chainDepth = Math.min(15, i.averageChainDepth * 5);
  const total = Math.min(REPUTATION_TOTAL_CAP, volume + quality + diversity + chainDepth);
  return { volume: round1(volume), quality: round1(quality), diversity: round1(diversity), chain_depth: round1(chainDepth), total: round1(total), badge: badgeFor(total, registered, i.proofs > 0) };
}

/**
 * Badges: gold/silver/bronze by total; `registered` for a registered agent with verifiable work below
 * bronze; `none` otherwise, including a registered agent with no history (the spec's lookup rule).
 */
export function badgeFor(total: number, registered: boolean, hasHistory: boolean): string {
  for (const b of BADGE_THRESHOLDS) if (b.minScore > 0 && total >= b.minScore) return b.badge;
  return registered && hasHistory ? "registered" : "none";
}

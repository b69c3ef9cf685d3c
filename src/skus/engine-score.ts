import { reputationScore } from "../reputation/reputation-score.js";
import type { ReputationOf } from "./reputation-lookup.js";

// The reputation engine's view of a subject for the SKUs that report it. A wallet that is not a
// registered agent has no verifiable work as a provider: score 0, badge `none`.

export interface EngineScore {
  score: number;
  badge: string;
  components: { volume: number; quality: number; diversity: number; chain_depth: number };
}

export async function scoreOf(agent: { agentId: string } | undefined, reputationOf: ReputationOf | undefined): Promise<EngineScore> {
  if (agent && reputationOf) {
    const r = await reputationOf(agent.agentId);
    return { score: r.score, badge: r.badge, components: JSON.parse(r.componentsJson) as EngineScore["components"] };
  }
  // Without the engine (a deployment without the registry) or an agent: the formula over no work.
  const s = reputationScore({ proofs: 0, averageQuality: 0, distinctKinds: 0, averageChainDepth: 0 }, agent !== undefined);
  return { score: s.total, badge: s.badge, components: { volume: s.volume, quality: s.quality, diversity: s.diversity, chain_depth: s.chain_depth } };
}

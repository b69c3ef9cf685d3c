import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { GetAgentReputationResponseSchema, type GetAgentReputationRequest, type ReputationService } from "../../gen/svc/reputation/v1/reputation_service_pb.js";
import type { AgentStore } from "../registry/agent-store.js";
import { reputationScore } from "./reputation-score.js";

// Reputation of any registered agent. Until the reputation engine lands, no verifiable work is credited
// to any agent, so every agent is in the spec's zero state: found, score 0, badge none. Nothing is seeded.
export class ReputationServiceImpl implements ServiceImpl<typeof ReputationService> {
  constructor(private readonly agents: AgentStore) {}

  async getAgentReputation(req: GetAgentReputationRequest) {
    const agent = await this.agents.findOrThrow(req.name);
    const score = reputationScore({ proofs: 0, averageQuality: 0, distinctKinds: 0, averageChainDepth: 0 }, true);
    return create(GetAgentReputationResponseSchema, {
      agentId: agent.agentId,
      name: agent.name,
      found: true,
      score: score.total,
      badge: score.badge,
      components: { volume: score.volume, quality: score.quality, diversity: score.diversity, chainDepth: score.chain_depth },
      trend: [score.total],
      computeTime: timestampNow(),
    });
  }
}

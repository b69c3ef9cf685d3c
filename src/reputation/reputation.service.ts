import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { GetAgentReputationResponseSchema, type GetAgentReputationRequest, type ReputationService } from "../../gen/svc/reputation/v1/reputation_service_pb.js";
import type { AgentStore } from "../registry/agent-store.js";
import type { ReputationEngine } from "./reputation-engine.js";

// Reputation of any registered agent, from the engine (verifiable work only; an agent without any is in
// the spec's zero state: found, score 0, badge none).
export class ReputationServiceImpl implements ServiceImpl<typeof ReputationService> {
  constructor(private readonly agents: AgentStore, private readonly engine: ReputationEngine) {}

  async getAgentReputation(req: GetAgentReputationRequest) {
    const agent = await this.agents.findOrThrow(req.name);
    const r = await this.engine.current(agent.agentId);
    const c = JSON.parse(r.componentsJson) as { volume: number; quality: number; diversity: number; chain_depth: number };
    return create(GetAgentReputationResponseSchema, {
      agentId: agent.agentId,
      name: agent.name,
      found: true,
      score: r.score,
      badge: r.badge,
      components: { volume: c.volume, quality: c.quality, diversity: c.diversity, chainDepth: c.chain_depth },
      proofs: BigInt(r.proofs),
      completedJobs: BigInt(r.completedJobs),
      failedJobs: BigInt(r.failedJobs),
      disputes: BigInt(r.disputes),
      trend: JSON.parse(r.trendJson) as number[],
      computeTime: timestampFromDate(r.computeTime),
    });
  }
}

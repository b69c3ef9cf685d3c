import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AgentSchema, AgentTier, type Agent } from "../../gen/svc/registry/v1/agent_pb.js";
import type { AgentEntity } from "./agent.entity.js";

const TIERS: Record<string, AgentTier> = { observer: AgentTier.OBSERVER, explorer: AgentTier.EXPLORER, contributor: AgentTier.CONTRIBUTOR, operator: AgentTier.OPERATOR };

export function toAgentProto(e: AgentEntity): Agent {
  return create(AgentSchema, {
    agentId: e.agentId,
    name: e.name,
    tier: TIERS[e.tier] ?? AgentTier.OBSERVER,
    capabilities: JSON.parse(e.capabilitiesJson) as string[],
    evmAddress: e.evmAddress ?? "",
    createTime: timestampFromDate(e.createTime),
    onchainIdentity: e.identityAgentId ? `${e.identityNetwork}:${e.identityRegistry}:${e.identityAgentId}` : "",
    callbackConfigured: e.callbackUrl !== null,
  });
}

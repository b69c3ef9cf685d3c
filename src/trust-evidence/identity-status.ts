import { getAddress } from "viem";
import { z } from "zod";
import type { AgentEntity } from "../registry/agent.entity.js";
import type { IdentityChain, IdentityRecord } from "./identity-chain.js";

// Whether a registered agent's linked ERC-8004 identity still holds on-chain: the token exists and is
// owned by the wallet that owned it when the link was signed (a transfer means someone else now
// controls the identity, so the link is treated as revoked).

export type IdentityState = "verified" | "not_linked" | "controller_changed" | "missing" | "other_registry" | "unchecked";

export const IdentityStatusSchema = z.object({
  state: z.enum(["verified", "not_linked", "controller_changed", "missing", "other_registry", "unchecked"]),
  detail: z.string(),
  linked: z.object({ network: z.string(), registry: z.string(), agent_id: z.string(), owner_at_link: z.string().nullable() }).nullable(),
  onchain: z.object({ owner: z.string(), agent_wallet: z.string(), agent_uri: z.string() }).nullable(),
  source: z.object({ name: z.string(), endpoint: z.string(), read_at: z.string() }).nullable(),
});
export type IdentityStatus = z.infer<typeof IdentityStatusSchema> & { record?: IdentityRecord };

export async function identityStatus(agent: AgentEntity, chain: IdentityChain | undefined, now: Date): Promise<IdentityStatus> {
  if (!agent.identityAgentId || !agent.identityRegistry || !agent.identityNetwork) {
    return { state: "not_linked", detail: "the agent has not linked an ERC-8004 identity", linked: null, onchain: null, source: null };
  }
  const linked = { network: agent.identityNetwork, registry: agent.identityRegistry, agent_id: agent.identityAgentId, owner_at_link: agent.identityOwner };
  if (!chain) return { state: "unchecked", detail: "this deployment reads no chain: the link is reported as recorded", linked, onchain: null, source: null };
  if (agent.identityNetwork !== chain.network || getAddress(agent.identityRegistry) !== chain.registry) {
    return { state: "other_registry", detail: `linked on ${agent.identityNetwork}:${agent.identityRegistry}, not the registry this service reads (${chain.agentRegistry})`, linked, onchain: null, source: null };
  }
  const record = await chain.read(BigInt(agent.identityAgentId));
  const source = { name: "ERC-8004 Identity Registry", endpoint: chain.agentRegistry, read_at: now.toISOString() };
  if (!record) return { state: "missing", detail: `token ${agent.identityAgentId} does not exist on ${chain.agentRegistry}`, linked, onchain: null, source };
  const onchain = { owner: record.owner, agent_wallet: record.agentWallet, agent_uri: record.agentUri };
  const held = agent.identityOwner !== null && getAddress(agent.identityOwner) === record.owner;
  return held
    ? { state: "verified", detail: `token ${agent.identityAgentId} is still owned by ${record.owner}, who owned it when the link was signed`, linked, onchain, source, record }
    : { state: "controller_changed", detail: `token ${agent.identityAgentId} is now owned by ${record.owner}, not ${agent.identityOwner} who owned it when the link was signed`, linked, onchain, source, record };
}

/** The status without the raw record (what deliverables carry). */
export function publicStatus(s: IdentityStatus): z.infer<typeof IdentityStatusSchema> {
  const { record: _record, ...rest } = s;
  return rest;
}

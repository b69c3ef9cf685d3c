import { getAddress, isAddress } from "viem";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import { AgentEntity } from "../registry/agent.entity.js";
import type { AgentDirectory } from "./subject.js";

// A registered agent named by its name, its agent_id or its ERC-8004 identity: a bare token id ("42",
// on whichever registry this service links identities from) or the ERC-8004 global form
// `eip155:<chainId>:<registry>:<agentId>` (`/` or `#` also separate the token id). Wallet addresses and
// company names do not name a registered agent.

const ERC8004_GLOBAL = /^(eip155:\d{1,12}):(0x[0-9a-fA-F]{40})[:/#](\d{1,78})$/;
const TOKEN_ID = /^\d{1,78}$/;

export const AgentRef = z.string().trim().min(1).max(160);

/** `subject` as a string, or an object naming the agent by one of its identifiers. */
export const AgentSubject = z.union([
  AgentRef,
  z
    .object({
      agent_id: AgentRef.optional(),
      name: AgentRef.optional(),
      erc8004_id: z.union([AgentRef.regex(TOKEN_ID, "a decimal token id"), z.number().int().nonnegative()]).optional(),
      agent_registry: z.string().trim().regex(/^eip155:\d{1,12}:0x[0-9a-fA-F]{40}$/, "eip155:<chainId>:<registry address>").optional(),
    })
    .loose()
    .refine((s) => s.agent_id !== undefined || s.name !== undefined || s.erc8004_id !== undefined, { message: "name the agent: agent_id, name or erc8004_id" }),
]);
export type AgentSubject = z.infer<typeof AgentSubject>;

/** The one text a subject is resolved from. */
export function subjectText(s: AgentSubject): string {
  if (typeof s === "string") return s;
  if (s.agent_id !== undefined) return s.agent_id;
  if (s.name !== undefined) return s.name;
  return s.agent_registry ? `${s.agent_registry}:${s.erc8004_id}` : String(s.erc8004_id);
}

export type AgentLookup = { agent: AgentEntity; matchedBy: "agent_id" | "name" | "erc8004_id" } | { agent: undefined; reason: string };

/** Resolves a reference through the directory (names, ids) or the registry's linked identities (ERC-8004 ids). */
export async function lookupAgent(directory: AgentDirectory, manager: EntityManager, ref: string): Promise<AgentLookup> {
  const text = ref.trim();
  const global = ERC8004_GLOBAL.exec(text);
  if (global || TOKEN_ID.test(text)) {
    const where = global
      ? { identityNetwork: global[1]!, identityRegistry: getAddress(global[2]!), identityAgentId: BigInt(global[3]!).toString() }
      : { identityAgentId: BigInt(text).toString() };
    const linked = await manager.find(AgentEntity, { where, take: 2 });
    if (linked.length > 1) return { agent: undefined, reason: `ERC-8004 id ${text} is linked on more than one registry here; name it as eip155:<chainId>:<registry>:${text}` };
    // The directory has the last word: a deployment without the registry resolves nobody.
    const agent = linked[0] && (await directory.resolve(linked[0].agentId)) ? linked[0] : undefined;
    return agent ? { agent, matchedBy: "erc8004_id" } : { agent: undefined, reason: `no registered agent has linked the ERC-8004 identity ${text}` };
  }
  if (isAddress(text, { strict: false })) return { agent: undefined, reason: `${text} is a wallet address, not a registered agent: name the agent or its ERC-8004 id` };
  const found = await directory.resolve(text);
  const agent = found ? await manager.findOneBy(AgentEntity, { agentId: found.agentId }) : null;
  return agent ? { agent, matchedBy: found!.agentId.toLowerCase() === text.toLowerCase() ? "agent_id" : "name" } : { agent: undefined, reason: `no registered agent named ${text}` };
}

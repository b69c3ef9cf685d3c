import { getAddress, isAddress } from "viem";
import { z } from "zod";

// A subject is a wallet address (always resolvable: its history is on our ledger) or an agent name
// or id (resolved through the agent directory).

export type Subject = { kind: "wallet"; address: string } | { kind: "agent"; name: string };

export const SubjectText = z.string().trim().min(1).max(128);

export function parseSubject(text: string): Subject {
  return isAddress(text, { strict: false }) ? { kind: "wallet", address: getAddress(text) } : { kind: "agent", name: text };
}

/** Finds registered agents by id or name. */
export interface AgentDirectory {
  resolve(nameOrId: string): Promise<{ agentId: string; name: string; evmAddress?: string } | undefined>;
}

/** The directory of a deployment without the registry: it knows no agents, so agent subjects never resolve. */
export const NO_AGENTS: AgentDirectory = { resolve: async () => undefined };

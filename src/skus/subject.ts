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

export interface ResolvedSubject {
  subject: Subject;
  agent: { agentId: string; name: string; evmAddress?: string } | undefined;
  /** The wallet whose settlement history speaks for the subject, if any. */
  wallet: string | undefined;
}

/** Resolves a subject; an agent name the directory does not know resolves to undefined. */
export async function resolveSubject(directory: AgentDirectory, text: string): Promise<ResolvedSubject | undefined> {
  const subject = parseSubject(text);
  if (subject.kind === "wallet") return { subject, agent: undefined, wallet: subject.address };
  const agent = await directory.resolve(subject.name);
  return agent ? { subject, agent, wallet: agent.evmAddress } : undefined;
}

/** The `precheck` of SKUs about a subject: a reason when it does not resolve. */
export async function unresolvedSubject(directory: AgentDirectory, text: string): Promise<string | undefined> {
  return (await resolveSubject(directory, text)) ? undefined : `no registered agent named ${text}`;
}

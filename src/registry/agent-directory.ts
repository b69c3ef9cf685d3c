import type { AgentDirectory } from "../skus/subject.js";
import type { AgentStore } from "./agent-store.js";

/** The registry as the SKU engines see it: agents by id or name, with their payout wallet. */
export function registryDirectory(agents: AgentStore): AgentDirectory {
  return {
    async resolve(nameOrId) {
      const a = await agents.find(nameOrId);
      return a ? { agentId: a.agentId, name: a.name, evmAddress: a.evmAddress ?? undefined } : undefined;
    },
  };
}

import { In, type EntityManager } from "typeorm";
import { AgentEntity } from "../registry/agent.entity.js";
import { standingOf } from "./subscriptions.js";

// The Operator tier's priority queue: async jobs paid from the payout wallet of an agent that holds the
// Operator plan are claimed before everyone else's (then oldest first). Other payers' jobs keep their
// order among themselves; nothing is ever skipped for good, only served later.

export const OPERATOR_JOB_PRIORITY = 1;

/** The claim priority of a job paid by `payer` at `at`: OPERATOR_JOB_PRIORITY for Operator-tier agents, else 0. */
export async function jobPriorityOf(m: EntityManager, payer: string, at: Date): Promise<number> {
  const agents = await m.find(AgentEntity, { where: { evmAddress: In([payer, payer.toLowerCase()]) } });
  for (const a of agents) if ((await standingOf(m, a.agentId, at)).tier === "operator") return OPERATOR_JOB_PRIORITY;
  return 0;
}

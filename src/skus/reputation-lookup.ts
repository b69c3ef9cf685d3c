import { z } from "zod";
import { disputeHistory } from "../arbitration/dispute-history.js";
import { reputationScore } from "../reputation/reputation-score.js";
import { settlementHistory } from "./settlement-history.js";
import type { AgentDirectory } from "./subject.js";
import type { SkuHandler } from "./sku-handler.js";
import { Badge, DisputeHistoryOut, Iso } from "./output-shapes.js";

// reputation.lookup: completed vs failed jobs, dispute history and trust-score trend of a registered
// agent, named as `agent_id: <name>` inside `task`. An unknown agent is `insufficient_subject`, not charged.

const AGENT_IN_TASK = /agent_id\s*:\s*([A-Za-z0-9_.@-]{1,128})/;

const Input = z
  .object({ task: z.string().max(4096).regex(AGENT_IN_TASK, "task must contain `agent_id: <name>`") })
  .loose();
type Input = z.infer<typeof Input>;

const Output = z.object({
  agent_id: z.string(),
  name: z.string(),
  found: z.literal(true),
  score: z.number(),
  badge: Badge,
  completed_jobs: z.number().int(),
  failed_jobs: z.number().int(),
  disputes: DisputeHistoryOut,
  trend: z.array(z.number()),
  computed_at: Iso,
});


const agentOf = (input: Input) => AGENT_IN_TASK.exec(input.task)![1]!;

/** The reputation engine's stored view of an agent. */
export type ReputationOf = (agentId: string) => Promise<{ score: number; badge: string; componentsJson: string; completedJobs: number; failedJobs: number; disputes: number; trendJson: string }>;

export function reputationLookup(directory: AgentDirectory, reputationOf?: ReputationOf): SkuHandler<Input> {
  return {
    skuId: "reputation.lookup",
    poweredBy: "svc-ledger/reputation",
    input: Input,
    output: Output,
    async precheck(input) {
      return (await directory.resolve(agentOf(input))) ? undefined : `no registered agent named ${agentOf(input)}`;
    },
    async run(input, ctx) {
      const agent = (await directory.resolve(agentOf(input)))!;
      if (reputationOf) {
        const r = await reputationOf(agent.agentId);
        return {
          agent_id: agent.agentId,
          name: agent.name,
          found: true,
          score: r.score,
          badge: r.badge,
          completed_jobs: r.completedJobs,
          failed_jobs: r.failedJobs,
          disputes: await disputeHistory(ctx.manager, [agent.agentId, agent.name, agent.evmAddress]),
          trend: JSON.parse(r.trendJson) as number[],
          computed_at: ctx.now.toISOString(),
        };
      }
      const history = agent.evmAddress ? await settlementHistory(ctx.manager, agent.evmAddress) : undefined;
      const proofs = history?.settled_payments ?? 0;
      const score = reputationScore({ proofs, averageQuality: 0, distinctKinds: proofs > 0 ? 1 : 0, averageChainDepth: 0 }, true);
      return {
        agent_id: agent.agentId,
        name: agent.name,
        found: true,
        score: score.total,
        badge: score.badge,
        completed_jobs: 0,
        failed_jobs: 0,
        disputes: await disputeHistory(ctx.manager, [agent.agentId, agent.name, agent.evmAddress]),
        trend: [score.total],
        computed_at: ctx.now.toISOString(),
      };
    },
  };
}

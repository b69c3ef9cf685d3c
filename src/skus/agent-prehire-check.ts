import { z } from "zod";
import { scoreOf } from "./engine-score.js";
import type { ReputationOf } from "./reputation-lookup.js";
import { disputeHistory } from "../arbitration/dispute-history.js";
import { resolveSubject, SubjectText, unresolvedSubject, type AgentDirectory } from "./subject.js";
import { settlementHistory } from "./settlement-history.js";
import type { SkuHandler } from "./sku-handler.js";
import { Badge, DisputeHistoryOut, Iso, SettlementHistoryOut } from "./output-shapes.js";

// agent.prehire-check (async): due diligence on an agent or wallet from records this service holds:
// settlement history, adjudicated disputes (proof kind 30129) and flagged incidents (refunds,
// rejected payments). It never invents facts; each section names its source.

const Input = z.object({ subject: SubjectText }).loose();
type Input = z.infer<typeof Input>;

const Output = z.object({
  subject: z.string(),
  subject_kind: z.enum(["wallet", "agent"]),
  wallet: z.string().nullable(),
  registered: z.boolean(),
  settlement_history: SettlementHistoryOut.nullable(),
  disputes: DisputeHistoryOut.extend({ dispute_rate: z.number() }),
  flagged_incidents: z.array(z.string()),
  reputation: z.object({ score: z.number(), badge: Badge }),
  sources: z.array(z.string()),
  report_time: Iso,
});


export function agentPrehireCheck(directory: AgentDirectory, reputationOf?: ReputationOf): SkuHandler<Input> {
  return {
    skuId: "agent.prehire-check",
    poweredBy: "svc-ledger/prehire-check",
    input: Input,
    output: Output,
    precheck: (input) => unresolvedSubject(directory, input.subject),
    async run(input, ctx) {
      const { subject: s, agent, wallet } = (await resolveSubject(directory, input.subject))!;
      const history = wallet ? await settlementHistory(ctx.manager, wallet) : undefined;
      const disputes = await disputeHistory(ctx.manager, [input.subject, wallet, agent?.agentId, agent?.name]);
      const incidents: string[] = [];
      if (history?.refunded_payments) incidents.push(`${history.refunded_payments} paid call(s) refunded after the service failed`);
      if (history?.rejected_payments) incidents.push(`${history.rejected_payments} payment(s) rejected at verification`);
      if (disputes.upheld) incidents.push(`${disputes.upheld} dispute(s) upheld against the subject`);
      const score = await scoreOf(agent, reputationOf);
      const settled = history?.settled_payments ?? 0;
      return {
        subject: input.subject,
        subject_kind: s.kind,
        wallet: wallet ?? null,
        registered: agent !== undefined,
        settlement_history: history ?? null,
        disputes: { ...disputes, dispute_rate: settled ? disputes.recorded / settled : 0 },
        flagged_incidents: incidents,
        reputation: { score: score.score, badge: score.badge },
        sources: ["x402 payments settled by this service", "proof rail kind 30129 (adjudicated outcomes)"],
        report_time: ctx.now.toISOString(),
      };
    },
  };
}

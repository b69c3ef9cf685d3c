import { z } from "zod";
import { reputationScore } from "../reputation/reputation-score.js";
import { resolveSubject, SubjectText, unresolvedSubject, type AgentDirectory } from "./subject.js";
import { settlementHistory } from "./settlement-history.js";
import type { SkuHandler } from "./sku-handler.js";

// agent.trust-badge: a badge from verified settlement history only. No history: score 0, badge none.

const Input = z.object({ subject: SubjectText }).loose();
type Input = z.infer<typeof Input>;

export function agentTrustBadge(directory: AgentDirectory): SkuHandler<Input> {
  return {
    skuId: "agent.trust-badge",
    poweredBy: "svc-ledger/trust-badge",
    input: Input,
    precheck: (input) => unresolvedSubject(directory, input.subject),
    async run(input, ctx) {
      const { agent, wallet } = (await resolveSubject(directory, input.subject))!;
      const history = wallet ? await settlementHistory(ctx.manager, wallet) : undefined;
      const proofs = history?.settled_payments ?? 0;
      const score = reputationScore({ proofs, averageQuality: 0, distinctKinds: proofs > 0 ? 1 : 0, averageChainDepth: 0 }, agent !== undefined);
      return {
        subject: input.subject,
        wallet: wallet ?? null,
        registered: agent !== undefined,
        badge: score.badge,
        score: score.total,
        components: { volume: score.volume, quality: score.quality, diversity: score.diversity, chain_depth: score.chain_depth },
        settled_payments: proofs,
        settled_usd: history?.settled_usd ?? 0,
        basis: "verified settlements of this service (proof kind 30120); quality counts only judged work, none is seeded",
        computed_at: ctx.now.toISOString(),
      };
    },
  };
}

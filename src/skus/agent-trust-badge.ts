import { z } from "zod";
import { scoreOf } from "./engine-score.js";
import type { ReputationOf } from "./reputation-lookup.js";
import { resolveSubject, SubjectText, unresolvedSubject, type AgentDirectory } from "./subject.js";
import { settlementHistory } from "./settlement-history.js";
import type { SkuHandler } from "./sku-handler.js";
import { Badge, Iso, ScoreComponentsOut } from "./output-shapes.js";

// agent.trust-badge: the reputation engine's badge and score for a registered agent; a wallet that is not one has
// no verifiable work as a provider (score 0, badge none). The subject's own settled payments are reported alongside.

const Input = z.object({ subject: SubjectText }).loose();
type Input = z.infer<typeof Input>;

const Output = z.object({
  subject: z.string(),
  wallet: z.string().nullable(),
  registered: z.boolean(),
  badge: Badge,
  score: z.number(),
  components: ScoreComponentsOut,
  settled_payments: z.number().int(),
  settled_usd: z.number(),
  basis: z.string(),
  computed_at: Iso,
});


export function agentTrustBadge(directory: AgentDirectory, reputationOf?: ReputationOf): SkuHandler<Input> {
  return {
    skuId: "agent.trust-badge",
    poweredBy: "svc-ledger/trust-badge",
    input: Input,
    output: Output,
    precheck: (input) => unresolvedSubject(directory, input.subject),
    async run(input, ctx) {
      const { agent, wallet } = (await resolveSubject(directory, input.subject))!;
      const history = wallet ? await settlementHistory(ctx.manager, wallet) : undefined;
      const proofs = history?.settled_payments ?? 0;
      const score = await scoreOf(agent, reputationOf);
      return {
        subject: input.subject,
        wallet: wallet ?? null,
        registered: agent !== undefined,
        badge: score.badge,
        score: score.score,
        components: score.components,
        settled_payments: proofs,
        settled_usd: history?.settled_usd ?? 0,
        basis: "the reputation engine: released marketplace jobs, witness verdicts on them and credited attestations; nothing is seeded. settled_* report the subject's paid calls (kind 30120)",
        computed_at: ctx.now.toISOString(),
      };
    },
  };
}

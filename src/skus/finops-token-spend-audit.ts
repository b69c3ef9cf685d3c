import { z } from "zod";
import { DECIMAL_PLACES, decimalProblem } from "../finops/exact-decimal.js";
import { ANOMALY_RULES, auditSpend } from "../finops/spend-audit.js";
import type { SkuHandler } from "./sku-handler.js";

// finops.token-spend-audit: the buyer's own usage records (model, tokens in/out, cost, timestamp,
// scope tag) audited against its budget and allowed scopes. Computed from the records alone (nothing is
// fetched); costs are exact decimals, summed as integers.

const MAX_RECORDS = 10_000;

const Amount = z.union([z.string().max(40), z.number()]).superRefine((v, ctx) => {
  const problem = decimalProblem(v);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const Name = z.string().trim().min(1).max(128);
const Tokens = z.number().int().min(0).max(1e12);

const UsageRecord = z
  .object({ id: z.string().max(128).optional(), model: Name, tokens_in: Tokens, tokens_out: Tokens, cost: Amount, timestamp: z.iso.datetime({ offset: true }), scope: Name })
  .loose();

const Input = z
  .object({
    agent: z.string().trim().max(128).optional(),
    currency: z.string().regex(/^[A-Z]{3,5}$/, "an ISO-style currency code such as USD").default("USD"),
    budget: z
      .object({
        total: Amount,
        per_model: z.record(Name, Amount).optional(),
        per_scope: z.record(Name, Amount).optional(),
        period_start: z.iso.datetime({ offset: true }).optional(),
        period_end: z.iso.datetime({ offset: true }).optional(),
      })
      .loose(),
    allowed_scopes: z.array(Name).min(1).max(500),
    allowed_models: z.array(Name).min(1).max(500).optional(),
    prices: z.record(Name, z.object({ input_per_million: Amount, output_per_million: Amount }).loose()).optional(),
    records: z.array(UsageRecord).min(1).max(MAX_RECORDS),
  })
  .loose()
  .refine((i) => !i.budget.period_start || !i.budget.period_end || new Date(i.budget.period_start) <= new Date(i.budget.period_end), { message: "period_start must not be after period_end", path: ["budget", "period_end"] });
type Input = z.infer<typeof Input>;

const Ref = { index: z.number(), id: z.string().nullable() };
const Breakdown = {
  allowed: z.boolean(),
  records: z.number(),
  tokens_in: z.string(),
  tokens_out: z.string(),
  cost: z.string(),
  share_of_cost_bps: z.number(),
  budget: z.string().nullable(),
  over_budget: z.boolean(),
};

export const TokenSpendAuditOutput = z.object({
  agent: z.string().nullable(),
  currency: z.string(),
  totals: z.object({ records: z.number(), tokens_in: z.string(), tokens_out: z.string(), cost: z.string() }),
  budget: z.object({ total: z.string(), spent: z.string(), remaining: z.string(), utilization_bps: z.number(), period_start: z.string().nullable(), period_end: z.string().nullable() }),
  by_model: z.array(z.object({ model: z.string(), ...Breakdown })),
  by_scope: z.array(z.object({ scope: z.string(), ...Breakdown })),
  overruns: z.array(z.object({ level: z.enum(["total", "model", "scope"]), key: z.string(), budget: z.string(), spent: z.string(), over_by: z.string(), exceeded_at: z.object({ ...Ref, timestamp: z.string() }) })),
  out_of_scope: z.array(z.object({ ...Ref, reason: z.enum(["scope_not_allowed", "model_not_allowed"]), scope: z.string(), model: z.string(), cost: z.string() })),
  anomalies: z.array(z.object({ rule: z.enum(Object.keys(ANOMALY_RULES) as [keyof typeof ANOMALY_RULES]), ...Ref, model: z.string(), detail: z.string() })),
  within_budget: z.boolean(),
  compliant: z.boolean(),
  rules: z.record(z.string(), z.string()),
  arithmetic: z.string(),
  source: z.object({ name: z.string(), records: z.number(), audited_at: z.string() }),
});

export function finopsTokenSpendAudit(): SkuHandler<Input> {
  return {
    skuId: "finops.token-spend-audit",
    poweredBy: "svc-finops/spend-audit",
    input: Input,
    output: TokenSpendAuditOutput,
    async run(input, ctx) {
      const audit = auditSpend(input.records, input, ctx.now);
      return {
        agent: input.agent ?? null,
        currency: input.currency,
        ...audit,
        rules: { ...ANOMALY_RULES },
        arithmetic: `exact: amounts are integers of 10^-${DECIMAL_PLACES} ${input.currency}; JSON numbers are read by their shortest decimal text; bps are rounded down`,
        source: { name: "usage records supplied by the buyer", records: input.records.length, audited_at: ctx.now.toISOString() },
      };
    },
  };
}

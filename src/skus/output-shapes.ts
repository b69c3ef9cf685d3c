import { z } from "zod";

// Output schema pieces shared by the registry-derived deliverables (published as `x-output-schema`).

export const Iso = z.string().describe("RFC 3339 time");
export const Badge = z.enum(["none", "registered", "bronze", "silver", "gold"]);

export const SettlementHistoryOut = z.object({
  settled_payments: z.number().int(),
  settled_usd: z.number(),
  refunded_payments: z.number().int(),
  refunded_usd: z.number(),
  rejected_payments: z.number().int(),
  first_settlement: Iso.nullable(),
  last_settlement: Iso.nullable(),
  by_sku: z.record(z.string(), z.number().int()),
});

export const DisputeHistoryOut = z.object({
  recorded: z.number().int(),
  upheld: z.number().int(),
  overturned: z.number().int(),
  withdrawn: z.number().int(),
  recent: z.array(z.object({ dispute_id: z.string(), job_id: z.string(), verdict: z.string(), proof_id: z.string(), decided_at: Iso })),
});

export const ScoreComponentsOut = z.object({ volume: z.number(), quality: z.number(), diversity: z.number(), chain_depth: z.number() });

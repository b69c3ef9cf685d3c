import { randomBytes, timingSafeEqual } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import { newId } from "../platform/ids.js";
import { prepareProof, recordProof, type ProofInput } from "../proof/proof-recorder.js";
import { SkuRefusal, type SkuContext, type SkuHandler } from "../skus/sku-handler.js";
import { Iso } from "../skus/output-shapes.js";
import { findProtocol, scoreProtocol } from "./compliance.js";
import { MarketSubscriptionEntity } from "./markets.entity.js";
import { activePlanEnd } from "./subscriptions.js";
import { AGENT_PROOF_PRICE, COMPLIANCE_PRICE, PLAN_PERIOD_MS } from "./tiers.js";

// The markets API's USD-priced calls, sold through THE payment gate (same challenge, claim, settlement,
// proof and ledger path as every catalog SKU; no second payment path). They are internal SKU
// definitions handed to the gate only: not in the catalog, and callable only through /markets-api,
// which authenticates the agent's API key first and passes this process's grant (a call to
// /v1/services/markets.* without it is refused before any challenge).

export const MARKETS_SKU = {
  complianceCheck: "markets.compliance-check",
  compliancePlan: "markets.compliance-plan",
  agentProof: "markets.agent-proof",
} as const;

/** Rail kind of agent-submitted proofs: never one of the service's own kinds, so no reader mistakes one for a service record. */
export const AGENT_PROOF_KIND = 30140;
export const AGENT_PROOF_TASK_CLASS = "agent";

const definition = (skuId: string, name: string, purpose: string, priceAtomic: bigint): SkuDefinition => ({
  skuId,
  family: "markets",
  name,
  purpose,
  priceAtomic,
  mode: "sync",
  retired: false,
  onboardingRequired: false,
});

export const MARKETS_SKU_DEFINITIONS: readonly SkuDefinition[] = [
  definition(MARKETS_SKU.complianceCheck, "Compliance check", "risk score out of 100 and tail risk of a protocol (markets API)", COMPLIANCE_PRICE.perCall),
  definition(MARKETS_SKU.compliancePlan, "Compliance API monthly plan", "30 days of compliance checks (markets API)", COMPLIANCE_PRICE.monthly),
  definition(MARKETS_SKU.agentProof, "Agent proof", "records an agent's proof on the proof rail (markets API)", AGENT_PROOF_PRICE),
];

/** The secret /markets-api passes with each of its gate calls (drawn per process: run happens where call is made). */
export class MarketsGrant {
  readonly value = randomBytes(32).toString("hex");

  matches(given: string): boolean {
    const a = Buffer.from(given);
    const b = Buffer.from(this.value);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

const AGENT_ID = z.string().regex(/^agent_[a-z0-9]{12}$/);
const Granted = { markets_grant: z.string(), agent_id: AGENT_ID };

function granted(grant: MarketsGrant) {
  return async (input: { markets_grant: string }): Promise<string | undefined> => {
    if (!grant.matches(input.markets_grant)) throw new SkuRefusal("markets_api_only", "this service is sold only through /markets-api, with an agent API key");
    return undefined;
  };
}

// ---- markets.compliance-check ----------------------------------------------------------------------

const ComplianceInput = z.object({ ...Granted, protocol: z.string().trim().min(1).max(100) }).loose();
const FactorOut = z.object({ name: z.string(), value: z.string(), points: z.number(), max_points: z.number() });
export const ComplianceOutput = z.object({
  protocol: z.string(),
  name: z.string(),
  risk_score: z.number().min(0).max(100),
  tail_risk_pct: z.number(),
  factors: z.array(z.string()),
  factor_details: z.array(FactorOut),
  data_as_of: z.string(),
  sources: z.array(z.string()),
  agent_id: z.string(),
  checked_at: Iso,
});

function complianceCheck(grant: MarketsGrant): SkuHandler<z.infer<typeof ComplianceInput>> {
  return {
    skuId: MARKETS_SKU.complianceCheck,
    poweredBy: "svc-markets/compliance",
    input: ComplianceInput,
    output: ComplianceOutput,
    async precheck(input) {
      await granted(grant)(input);
      return findProtocol(input.protocol) ? undefined : `no protocol ${input.protocol} in the compliance dataset`;
    },
    async run(input, ctx) {
      const facts = findProtocol(input.protocol);
      if (!facts) throw new Error(`no protocol ${input.protocol}`);
      return { ...scoreProtocol(facts, ctx.now), agent_id: input.agent_id, checked_at: ctx.now.toISOString() } as unknown as JsonObject;
    },
  };
}

// ---- markets.compliance-plan -----------------------------------------------------------------------

const PlanInput = z.object(Granted).loose();
export const PlanOutput = z.object({
  subscription_id: z.string(),
  agent_id: z.string(),
  plan: z.literal("compliance"),
  start_time: Iso,
  end_time: Iso,
  price_amount: z.string(),
});

function compliancePlan(grant: MarketsGrant): SkuHandler<z.infer<typeof PlanInput>> {
  return {
    skuId: MARKETS_SKU.compliancePlan,
    poweredBy: "svc-markets/plans",
    input: PlanInput,
    output: PlanOutput,
    precheck: granted(grant),
    async run(input, ctx) {
      // A renewal starts when the current period ends.
      const current = await activePlanEnd(ctx.manager, input.agent_id, "compliance", ctx.now);
      const start = current && current > ctx.now ? current : ctx.now;
      return {
        subscription_id: newId("sub"),
        agent_id: input.agent_id,
        plan: "compliance",
        start_time: start.toISOString(),
        end_time: new Date(start.getTime() + PLAN_PERIOD_MS).toISOString(),
        price_amount: COMPLIANCE_PRICE.monthly.toString(),
      };
    },
    async commit(m: EntityManager, deliverable: JsonObject, ctx: SkuContext) {
      const d = PlanOutput.parse(deliverable);
      if (await m.findOneBy(MarketSubscriptionEntity, { subscriptionId: d.subscription_id })) return;
      await m.insert(MarketSubscriptionEntity, {
        subscriptionId: d.subscription_id,
        agentId: d.agent_id,
        plan: "compliance",
        startTime: new Date(d.start_time),
        endTime: new Date(d.end_time),
        priceSats: 0n,
        priceAtomic: BigInt(d.price_amount),
        paidWith: "x402",
        paymentId: ctx.paymentId,
        createTime: ctx.now,
      });
    },
  };
}

// ---- markets.agent-proof ---------------------------------------------------------------------------

const ProofInputSchema = z
  .object({
    ...Granted,
    agent_name: z.string(),
    declared_kind: z.number().int().min(1).max(65535),
    content_sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters"),
    label: z.string().max(200),
  })
  .loose();
export const AgentProofOutput = z.object({
  proof_id: z.string(),
  kind: z.literal(AGENT_PROOF_KIND),
  declared_kind: z.number().int(),
  content_sha256: z.string(),
  label: z.string(),
  agent_id: z.string(),
  agent_name: z.string(),
  submitted_at: Iso,
  record_sha256: z.string(),
  proof_url: z.string(),
});

/** The rail record of an agent proof: what the agent claimed, who it is, and the payment (public fields only). */
function agentProofRecord(d: { agent_id: string; agent_name: string; declared_kind: number; content_sha256: string; label: string; submitted_at: string }, paymentId: string): ProofInput {
  return {
    kind: AGENT_PROOF_KIND,
    settlementRef: paymentId,
    taskClass: AGENT_PROOF_TASK_CLASS,
    ts: new Date(d.submitted_at),
    body: {
      agent_id: d.agent_id,
      agent_name: d.agent_name,
      declared_kind: d.declared_kind,
      content_sha256: d.content_sha256,
      label: d.label,
      submitted_at: d.submitted_at,
      payment_id: paymentId,
      statement: "self-submitted by the agent named: the service attests who submitted it and when, not the content's truth",
    },
  };
}

function agentProof(grant: MarketsGrant): SkuHandler<z.infer<typeof ProofInputSchema>> {
  return {
    skuId: MARKETS_SKU.agentProof,
    poweredBy: "svc-markets/proofs",
    input: ProofInputSchema,
    output: AgentProofOutput,
    precheck: granted(grant),
    async run(input, ctx) {
      const claim = { agent_id: input.agent_id, agent_name: input.agent_name, declared_kind: input.declared_kind, content_sha256: input.content_sha256, label: input.label, submitted_at: ctx.now.toISOString() };
      const proofId = newId("prf");
      const record = prepareProof(ctx.proofKey, agentProofRecord(claim, ctx.paymentId), proofId);
      return { proof_id: proofId, kind: AGENT_PROOF_KIND, ...claim, record_sha256: record.recordSha256, proof_url: `/v1/proofs/${proofId}` };
    },
    async commit(m, deliverable, ctx) {
      const d = AgentProofOutput.parse(deliverable);
      await recordProof(m, ctx.proofKey, agentProofRecord(d, ctx.paymentId), d.proof_id);
    },
  };
}

/** The internal SKUs' engines, keyed by SKU id, for the payment gate. */
export function marketsSkuHandlers(grant: MarketsGrant): Map<string, SkuHandler<any>> {
  return new Map<string, SkuHandler<any>>([
    [MARKETS_SKU.complianceCheck, complianceCheck(grant)],
    [MARKETS_SKU.compliancePlan, compliancePlan(grant)],
    [MARKETS_SKU.agentProof, agentProof(grant)],
  ]);
}

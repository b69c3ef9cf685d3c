import { In, type EntityManager } from "typeorm";
import { z } from "zod";
import { DisputeEntity } from "../arbitration/dispute.entity.js";
import { MarketJobEntity } from "../marketplace/marketplace.entity.js";
import { newId } from "../platform/ids.js";
import { AgentEntity } from "../registry/agent.entity.js";
import type { SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// arbitration.dispute-settlement (async): the buyer of a marketplace job contests its deliverable. Once
// paid, the dispute waits for the operator panel (DecideDispute), whose verdict is the deliverable and
// is recorded as proof kind 30129. Only the job's requester may file, only against a delivered job.

const Input = z
  .object({
    job_id: z.string().trim().min(1).max(32),
    claim: z.string().trim().min(1, "claim is required: what is wrong with the deliverable").max(4000),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Output = z.object({
  dispute_id: z.string(),
  job_id: z.string(),
  verdict: z.enum(["upheld", "overturned", "withdrawn"]),
  rationale: z.string(),
  adjudicator: z.literal("operator_panel"),
  refund_amount: z.string().regex(/^\d+$/).describe("atomic USDC units"),
  refunded_to: z.literal("starter_credit_note").nullable(),
  proof_id: z.string(),
  proof_url: z.string(),
  decided_at: Iso,
  dispute_disclosure: z.record(z.string(), z.unknown()),
});


export const ARBITRATION_SKU = "arbitration.dispute-settlement";
const CONTESTABLE = ["completed", "paid"] as const;

async function requesterWallet(m: EntityManager, job: MarketJobEntity): Promise<string | undefined> {
  return (await m.findOneBy(AgentEntity, { agentId: job.requesterAgentId }))?.evmAddress ?? undefined;
}

export function arbitrationDisputeSettlement(): SkuHandler<Input> {
  return {
    skuId: ARBITRATION_SKU,
    poweredBy: "svc-arbitration/operator-panel",
    input: Input,
    output: Output,
    async precheck(input, m) {
      const job = await m.findOneBy(MarketJobEntity, { jobId: input.job_id });
      if (!job) return `no marketplace job ${input.job_id}`;
      if (!(CONTESTABLE as readonly string[]).includes(job.state)) return `job ${job.jobId} is ${job.state}: only a delivered job (completed or paid) can be contested`;
      if (await m.countBy(DisputeEntity, { jobId: job.jobId, state: "open" })) return `a dispute on job ${job.jobId} is already open`;
      return undefined;
    },
    async authorize(input, payer, m) {
      const job = (await m.findOneBy(MarketJobEntity, { jobId: input.job_id }))!;
      const wallet = await requesterWallet(m, job);
      return wallet?.toLowerCase() === payer.toLowerCase() ? undefined : `only the requester of job ${job.jobId} may contest it (pay from the requester's wallet)`;
    },
    async awaitOperator(m, job) {
      await m.insert(DisputeEntity, {
        disputeId: newId("dsp"),
        jobId: job.input.job_id,
        serviceJobId: job.jobId,
        claimant: job.payer,
        claim: job.input.claim,
        state: "open",
        verdict: null,
        rationale: null,
        proofId: null,
        refund: 0n,
        createTime: job.now,
        decideTime: null,
      });
    },
    async run() {
      // Never claimed by a worker: the job waits in `awaiting` until the operator decides.
      throw new Error("arbitration verdicts are given by the operator panel (DecideDispute)");
    },
  };
}

/** Decided disputes on any of these marketplace jobs. */
export const decidedDisputes = (m: EntityManager, jobIds: string[]) => (jobIds.length ? m.countBy(DisputeEntity, { jobId: In(jobIds), state: "decided" }) : Promise.resolve(0));

import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import type { DataSource, EntityManager } from "typeorm";
import { CallServiceResponseSchema } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import { DisputeDisclosureSchema } from "../../gen/svc/catalog/v1/catalog_pb.js";
import { disputeDisclosure } from "../catalog/dispute-disclosure.js";
import { ServiceJobEntity } from "../jobs/service-job.entity.js";
import { ACCOUNTS, postEntry } from "../ledger/ledger.js";
import { MarketJobEntity, MarketRequestEntity, PayoutEntity } from "../marketplace/marketplace.entity.js";
import { forUpdate } from "../platform/db/locking.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { errors } from "../platform/rpc/errors.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../proof/proof-recorder.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { NOTE_ACCOUNTS } from "../registry/registry.service.js";
import { trustEnvelopeProto } from "../x402/payment-gate.js";
import { X402PaymentEntity } from "../x402/payment.entity.js";
import { settlementRef } from "../chain/settlement-logs.js";
import { DisputeEntity, VERDICTS, type DisputeVerdict } from "./dispute.entity.js";

// The operator panel's verdict on a dispute, in one transaction: the verdict proof (kind 30129), the
// refund when upheld, and the paid arbitration job delivered with the verdict. Decided once; asking
// again with the same verdict returns the decision, a different one is refused.

export const MAX_RATIONALE = 4000;

export interface DecideDeps {
  ds: DataSource;
  proofKey: ProofKey;
  sku: SkuDefinition;
  /** Recomputes the provider's reputation after a verdict. */
  onDecided?: (providerAgentId: string) => Promise<unknown>;
}

export async function decideDispute(d: DecideDeps, disputeId: string, verdictText: string, rationaleText: string): Promise<DisputeEntity> {
  const verdict = verdictText.trim().toLowerCase() as DisputeVerdict;
  if (!VERDICTS.includes(verdict)) throw errors.invalidArgument("invalid_verdict", `verdict must be one of ${VERDICTS.join(", ")}`, [{ field: "verdict", description: "unknown verdict" }]);
  const rationale = rationaleText.trim();
  if (!rationale || rationale.length > MAX_RATIONALE) throw errors.invalidArgument("invalid_rationale", `rationale is required, at most ${MAX_RATIONALE} characters`, [{ field: "rationale", description: "required" }]);

  let provider: string | undefined;
  const decided = await runInTransaction(d.ds, async (m) => {
    const dispute = await m.findOne(DisputeEntity, { where: { disputeId }, ...forUpdate(m) });
    if (!dispute) throw errors.notFound("dispute_not_found", `no dispute ${disputeId}`);
    if (dispute.state === "decided") {
      if (dispute.verdict === verdict && dispute.rationale === rationale) return dispute;
      throw errors.failedPrecondition("dispute_decided", `dispute ${disputeId} was already decided (${dispute.verdict}); verdicts are final`);
    }
    // Payout before job: the payout releaser locks in that order too.
    const payout = await m.findOne(PayoutEntity, { where: { jobId: dispute.jobId }, ...forUpdate(m) });
    const job = (await m.findOne(MarketJobEntity, { where: { jobId: dispute.jobId }, ...forUpdate(m) }))!;
    provider = job.providerAgentId;
    const refund = verdict === "upheld" ? await refundRequester(m, job, payout, disputeId) : 0n;
    const now = new Date();
    const payment = await paymentOf(m, dispute.serviceJobId);
    const providerAgent = await m.findOneBy(AgentEntity, { agentId: job.providerAgentId });
    const proof = await recordProof(m, d.proofKey, {
      kind: PROOF_KIND.adjudicatedOutcome,
      // The disputed payment's own settlement record (`{tx}:{index}` when it was one item of a batch).
      settlementRef: payment?.txHash ? settlementRef(payment.txHash, payment.batchIndex) : null,
      taskClass: "arbitration",
      ts: now,
      body: {
        dispute_id: disputeId,
        job_id: job.jobId,
        provider: job.providerAgentId,
        provider_name: providerAgent?.name ?? null,
        provider_wallet: providerAgent?.evmAddress ?? null,
        requester: job.requesterAgentId,
        claimant: dispute.claimant,
        verdict,
        rationale,
        adjudicator: "operator_panel",
        refund_amount: refund.toString(),
      },
    });
    Object.assign(dispute, { state: "decided", verdict, rationale, proofId: proof.proofId, refund, decideTime: now });
    await m.save(dispute);
    await deliverVerdict(m, d.sku, dispute, payment);
    return dispute;
  });
  if (provider) await d.onDecided?.(provider).catch(() => undefined);
  return decided;
}

/** Returns the job's price to the requester's note: from the unreleased payout, or at the service's expense once paid out. */
async function refundRequester(m: EntityManager, job: MarketJobEntity, payout: PayoutEntity | null, disputeId: string): Promise<bigint> {
  if (job.state === "failed") return 0n; // an earlier upheld dispute already refunded this job
  const request = (await m.findOneBy(MarketRequestEntity, { requestId: job.requestId }))!;
  const note = NOTE_ACCOUNTS.note(request.noteId);
  if (payout?.state === "releasing") throw errors.failedPrecondition("payout_in_flight", `the payout of job ${job.jobId} is being sent; decide again once it is released`);
  if (payout?.state === "pending") {
    await m.update(PayoutEntity, { payoutId: payout.payoutId, state: "pending" }, { state: "cancelled" });
    await postEntry(m, "dispute_refund", disputeId, [
      { account: ACCOUNTS.providerPayable(payout.providerAgentId), amount: payout.net },
      { account: ACCOUNTS.feeRevenue, amount: payout.fee },
      { account: note, amount: -payout.gross },
    ]);
  } else {
    await postEntry(m, "dispute_refund", disputeId, [
      { account: ACCOUNTS.disputeRefunds, amount: job.amount },
      { account: note, amount: -job.amount },
    ]);
  }
  await m.update(MarketJobEntity, { jobId: job.jobId }, { state: "failed" });
  return payout?.state === "pending" ? payout.gross : job.amount;
}

async function paymentOf(m: EntityManager, serviceJobId: string): Promise<X402PaymentEntity | null> {
  const job = await m.findOneBy(ServiceJobEntity, { jobId: serviceJobId });
  return job ? m.findOneBy(X402PaymentEntity, { paymentId: job.paymentId }) : null;
}

/** The verdict becomes the paid arbitration job's deliverable. */
async function deliverVerdict(m: EntityManager, sku: SkuDefinition, dispute: DisputeEntity, payment: X402PaymentEntity | null): Promise<void> {
  const deliverable: JsonObject = {
    dispute_id: dispute.disputeId,
    job_id: dispute.jobId,
    verdict: dispute.verdict!,
    rationale: dispute.rationale!,
    adjudicator: "operator_panel",
    refund_amount: dispute.refund.toString(),
    refunded_to: dispute.refund > 0n ? "starter_credit_note" : null,
    proof_id: dispute.proofId!,
    proof_url: `/v1/proofs/${dispute.proofId}`,
    decided_at: dispute.decideTime!.toISOString(),
    dispute_disclosure: toJson(DisputeDisclosureSchema, disputeDisclosure(), { useProtoFieldName: true, alwaysEmitImplicit: true }) as JsonObject,
  };
  const result = payment?.responseJson ? fromJson(CallServiceResponseSchema, JSON.parse(payment.responseJson)) : create(CallServiceResponseSchema, { skuId: sku.skuId, jobId: dispute.serviceJobId });
  result.status = CallStatus.DELIVERED;
  result.deliverable = deliverable;
  const job = await m.findOneBy(ServiceJobEntity, { jobId: dispute.serviceJobId });
  result.svcTrust = trustEnvelopeProto(deliverable, job?.manifestJson ? JSON.parse(job.manifestJson) : {});
  await m.update(ServiceJobEntity, { jobId: dispute.serviceJobId, state: "awaiting" }, { state: "delivered", resultJson: JSON.stringify(toJson(CallServiceResponseSchema, result)), finishTime: dispute.decideTime });
}

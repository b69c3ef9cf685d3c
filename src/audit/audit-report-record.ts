import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import { newId } from "../platform/ids.js";
import { PROOF_KIND, prepareProof, recordProof, signatureDisclosure, type ProofKey } from "../proof/proof-recorder.js";
import type { SkuContext } from "../skus/sku-handler.js";

// Audit reports on the proof rail: kind 30105 (audit report), task class `security`. The report's summary
// is the record's body (canonical JSON, hashed, HMAC-checksummed, Ed25519-signed, then Merkle-anchored with
// the rest of the rail), so `svc verify <proof_id>` checks it like any proof. It names the audited agent
// where the trust layer looks (`target`, `agent_id`, `subject.agent_id`), so procurement.trust-layer counts
// it among the agent's audit reports. The record is prepared in `run` (proof id drawn, so the deliverable
// shows it) and written by `commit` with the delivered job: a report whose job is refunded is not on the rail.

export const AUDIT_REPORT_TASK_CLASS = "security";

export const AuditReportProofSchema = z.object({
  proof_id: z.string(),
  kind: z.literal(PROOF_KIND.auditReport),
  settlement_ref: z.string(),
  task_class: z.string(),
  ts: z.string(),
  record_sha256: z.string(),
  ed25519_signature: z.string(),
  url: z.string(),
  verify: z.string(),
  anchoring: z.string(),
  signature_disclosure: z.string(),
});

/** A report id, and the proof block for the summary `body(reportId)` (signed, not yet recorded). */
export function prepareAuditReport(ctx: SkuContext, body: (reportId: string) => JsonObject) {
  const reportId = newId("aud");
  const summary = body(reportId);
  const proof = prepareProof(ctx.proofKey, { kind: PROOF_KIND.auditReport, settlementRef: reportId, taskClass: AUDIT_REPORT_TASK_CLASS, ts: ctx.now, body: summary });
  return {
    reportId,
    summary,
    proof: {
      proof_id: proof.proofId,
      kind: PROOF_KIND.auditReport,
      settlement_ref: reportId,
      task_class: AUDIT_REPORT_TASK_CLASS,
      ts: proof.ts.toISOString(),
      record_sha256: proof.recordSha256,
      ed25519_signature: proof.ed25519Signature ?? "",
      url: `/v1/proofs/${proof.proofId}`,
      verify: `svc verify ${proof.proofId}`,
      anchoring: "the record joins the next Merkle batch; once anchored, svc verify also checks its inclusion and the anchor transaction",
      signature_disclosure: signatureDisclosure(ctx.proofKey),
    },
  };
}

/** Records the deliverable's report summary under the proof id and time the deliverable shows. */
export async function commitAuditReport(manager: EntityManager, key: ProofKey, deliverable: JsonObject): Promise<void> {
  const proof = deliverable.proof as JsonObject;
  await recordProof(
    manager,
    key,
    { kind: PROOF_KIND.auditReport, settlementRef: String(deliverable.report_id), taskClass: String(proof.task_class), ts: new Date(String(proof.ts)), body: deliverable.report as JsonObject },
    String(proof.proof_id),
  );
}

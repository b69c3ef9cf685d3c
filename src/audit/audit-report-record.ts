import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { commitRecord, prepareRecord, proofBlockSchema, type PreparedRecordKind } from "../proof/prepared-record.js";
import { PROOF_KIND, type ProofKey } from "../proof/proof-recorder.js";
import type { SkuContext } from "../skus/sku-handler.js";

// Audit reports on the proof rail: kind 30105 (audit report), task class `security`. The report's summary
// is the record's body (canonical JSON, hashed, HMAC-checksummed, Ed25519-signed, then Merkle-anchored with
// the rest of the rail), so `svc verify <proof_id>` checks it like any proof. It names the audited agent
// where the trust layer looks (`target`, `agent_id`, `subject.agent_id`), so procurement.trust-layer counts
// it among the agent's audit reports. The record is prepared in `run` (proof id drawn, so the deliverable
// shows it) and written by `commit` with the delivered job: a report whose job is refunded is not on the rail.

export const AUDIT_REPORT_TASK_CLASS = "security";

const AUDIT_REPORT: PreparedRecordKind = { kind: PROOF_KIND.auditReport, taskClass: AUDIT_REPORT_TASK_CLASS, idField: "report_id", bodyField: "report" };

export const AuditReportProofSchema = proofBlockSchema(PROOF_KIND.auditReport);

/** A report id, and the proof block for the summary `body(reportId)` (signed, not yet recorded). */
export function prepareAuditReport(ctx: SkuContext, body: (reportId: string) => JsonObject) {
  const { id, body: summary, proof } = prepareRecord(ctx, AUDIT_REPORT, "aud", body);
  return { reportId: id, summary, proof };
}

/** Records the deliverable's report summary under the proof id and time the deliverable shows. */
export const commitAuditReport = (manager: EntityManager, key: ProofKey, deliverable: JsonObject): Promise<void> => commitRecord(manager, key, AUDIT_REPORT, deliverable);

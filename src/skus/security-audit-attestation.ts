import { createHash } from "node:crypto";
import { z } from "zod";
import { AttestationProofSchema, commitAttestation, prepareAttestation } from "../attestations/attestation-record.js";
import { checkClaims, claimsMatch, readReport, reportSha256, type EvidenceClass } from "../attestations/audit-claims.js";
import { lookupAgent } from "./registered-agent.js";
import type { SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";

// security.audit-attestation: notarizes that a specified audit of a deliverable (by its SHA-256) was
// performed, and whether the audit report supplied matches the claims made about it (auditor, result,
// date, scope, findings per severity). The signed statement is recorded on the proof rail (kind 30110)
// and verifiable with `svc verify <proof_id>`. What was checked is stated by `evidence_class`: a report
// read (`observed_report`), only its hash (`declared_report_hash`), or the claims alone (`self_declared`).

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters");
const Count = z.number().int().min(0).max(1_000_000);
const SKEW_MS = 5 * 60_000;

const Input = z
  .object({
    subject: z.string().trim().min(1).max(256),
    auditor: z.string().trim().min(1).max(128),
    deliverable: z.string().max(1_000_000).optional(),
    deliverable_sha256: Hex64.optional(),
    audit: z
      .object({
        scope: z.string().trim().min(1).max(1000),
        standard: z.string().trim().min(1).max(128).optional(),
        performed_at: z.iso.datetime({ offset: true }).refine((t) => Date.parse(t) <= Date.now() + SKEW_MS, "must not be in the future"),
        result: z.enum(["pass", "fail", "pass_with_findings", "inconclusive"]),
        findings: z.object({ critical: Count.optional(), high: Count.optional(), medium: Count.optional(), low: Count.optional(), info: Count.optional() }).strict().optional(),
      })
      .loose(),
    report: z.union([z.string().min(1).max(1_000_000), z.record(z.string(), z.unknown())]).optional(),
    report_sha256: Hex64.optional(),
  })
  .loose()
  .refine((i) => (i.deliverable === undefined) !== (i.deliverable_sha256 === undefined), { message: "give exactly one of deliverable or deliverable_sha256", path: ["deliverable_sha256"] });
type Input = z.infer<typeof Input>;

const ClaimCheckSchema = z.object({ claim: z.string(), claimed: z.string(), reported: z.string().nullable(), matches: z.boolean().nullable() });

export const AuditStatementSchema = z.object({
  attestation_id: z.string(),
  attestation_type: z.literal("audit"),
  sku_id: z.literal("security.audit-attestation"),
  subject: z.string(),
  subject_agent_id: z.string().nullable(),
  auditor: z.string(),
  deliverable_sha256: z.string(),
  audit: z.object({
    scope: z.string(),
    standard: z.string().nullable(),
    performed_at: z.string(),
    result: z.string(),
    findings: z.record(z.string(), z.number()).nullable(),
  }),
  report_sha256: z.string().nullable(),
  evidence_class: z.enum(["observed_report", "declared_report_hash", "self_declared"]),
  claims: z.array(ClaimCheckSchema),
  claims_match: z.boolean().nullable(),
  payer: z.string(),
  payment_id: z.string(),
  attested_at: z.string(),
});

export const AuditAttestationOutput = z.object({
  attestation_id: z.string(),
  statement: AuditStatementSchema,
  proof: AttestationProofSchema,
});

export function securityAuditAttestation(directory: AgentDirectory): SkuHandler<Input> {
  return {
    skuId: "security.audit-attestation",
    poweredBy: "svc-attest/audit",
    input: Input,
    output: AuditAttestationOutput,
    async run(input, ctx) {
      const deliverableSha256 = input.deliverable_sha256 ?? createHash("sha256").update(input.deliverable!, "utf8").digest("hex");
      const report = input.report === undefined ? undefined : readReport(input.report);
      const performedAt = new Date(input.audit.performed_at).toISOString();
      const claims = checkClaims(
        { auditor: input.auditor, deliverableSha256, scope: input.audit.scope, standard: input.audit.standard, performedAt, result: input.audit.result, findings: input.audit.findings },
        report,
      );
      const computed = input.report === undefined ? undefined : reportSha256(input.report);
      if (computed && input.report_sha256) claims.unshift({ claim: "report_sha256", claimed: input.report_sha256, reported: computed, matches: computed === input.report_sha256 });
      const evidenceClass: EvidenceClass = report !== undefined ? "observed_report" : input.report_sha256 ? "declared_report_hash" : "self_declared";
      const subjectAgent = await lookupAgent(directory, ctx.manager, input.subject);
      const { attestationId, body, proof } = prepareAttestation(ctx, "aat", (id) => ({
        attestation_id: id,
        attestation_type: "audit",
        sku_id: "security.audit-attestation",
        subject: input.subject,
        subject_agent_id: subjectAgent.agent?.agentId ?? null,
        auditor: input.auditor,
        deliverable_sha256: deliverableSha256,
        audit: { scope: input.audit.scope, standard: input.audit.standard ?? null, performed_at: performedAt, result: input.audit.result, findings: input.audit.findings ?? null },
        report_sha256: computed ?? input.report_sha256 ?? null,
        evidence_class: evidenceClass,
        claims,
        claims_match: evidenceClass === "observed_report" ? claimsMatch(claims) : null,
        payer: ctx.payer,
        payment_id: ctx.paymentId,
        attested_at: ctx.now.toISOString(),
      }));
      return { attestation_id: attestationId, statement: body, proof };
    },
    // The statement reaches the proof rail only with the settlement of the call that paid for it.
    commit: (manager, deliverable, ctx) => commitAttestation(manager, ctx.proofKey, deliverable),
  };
}

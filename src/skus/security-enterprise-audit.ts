import { z } from "zod";
import { AuditorSummarySchema, detailsSha256, EvidenceSchema, evidenceOf, FileRefSchema, fileRefs, findingsSummary, FindingsSummarySchema, REPORT_HASH_RULE } from "../audit/audit-evidence.js";
import { AuditReportProofSchema, commitAuditReport, prepareAuditReport } from "../audit/audit-report-record.js";
import { AuditSubjectInput, precheckAuditSubject, type AuditInput } from "../audit/audit-subject.js";
import { AUDITORS, auditFindings, auditorSummaries } from "../audit/auditors.js";
import { FindingSchema } from "../audit/finding.js";
import { llmReview, LlmReviewSchema } from "../audit/llm-review.js";
import { auditScore, ScoreSchema } from "../audit/score.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import type { SkuHandler } from "./sku-handler.js";

// security.enterprise-audit: the 13-agent audit. Thirteen specialist static auditors (src/audit/analyzers,
// each with a published rule set) read the artifacts of the subject payload; an LLM reviewer adds labelled
// findings when a model is configured. Findings are scoped to the evidence class (only observed_artifacts
// can produce code findings), scored 0-10 by a published formula, and the signed report summary is
// recorded on the proof rail as kind 30105 (Merkle-anchored; `svc verify <proof_id>`). Secrets found are
// redacted when the input is parsed, so neither the job row, the report, the rail nor the model sees them.

const SKU = "security.enterprise-audit";

const ReportSummary = z.object({
  report_id: z.string(),
  report_type: z.literal("enterprise_audit"),
  sku_id: z.literal(SKU),
  target: z.string(),
  owner: z.string().nullable(),
  agent_id: z.string(),
  agent_name: z.string().nullable(),
  subject: z.object({ agent_id: z.string() }),
  scope: z.literal("full"),
  evidence_class: z.enum(["self_declared", "notarized_manifest", "observed_artifacts"]),
  files: z.array(FileRefSchema),
  auditors: z.number(),
  findings_summary: FindingsSummarySchema,
  score: z.object({ value: z.number(), max: z.literal(10), basis: z.enum(["observed_artifacts", "declaration_only"]) }),
  llm_review: z.object({ status: z.string(), model: z.string().nullable(), findings: z.number() }),
  report_sha256: z.string(),
  report_sha256_rule: z.string(),
  payer: z.string(),
  payment_id: z.string(),
  audited_at: z.string(),
});

export const EnterpriseAuditOutput = z.object({
  report_id: z.string(),
  report: ReportSummary,
  details: z.object({
    evidence: EvidenceSchema,
    auditors: z.array(AuditorSummarySchema),
    findings: z.array(FindingSchema),
    findings_suppressed: z.record(z.string(), z.number()),
    llm_review: LlmReviewSchema,
    score: ScoreSchema,
  }),
  proof: AuditReportProofSchema,
});

export function securityEnterpriseAudit(llm: LlmEngine | undefined): SkuHandler<AuditInput> {
  return {
    skuId: SKU,
    poweredBy: "svc-audit/13-static-auditors",
    input: AuditSubjectInput,
    output: EnterpriseAuditOutput,
    // The artifacts are the code under audit: an injection pattern in them is a finding, not a refusal.
    // The subject's declared fields are content-trap scanned in the precheck instead.
    inputScan: "off",
    precheck: async (input) => precheckAuditSubject(input, SKU),
    async run(input, ctx) {
      const { findings, suppressed } = auditFindings(input, AUDITORS);
      const review = await llmReview(llm, input.files, ctx.paymentId);
      const score = auditScore(findings, input.evidence_class!);
      const details = { evidence: evidenceOf(input), auditors: auditorSummaries(AUDITORS, findings), findings, findings_suppressed: suppressed, llm_review: review, score };
      const { reportId, summary, proof } = prepareAuditReport(ctx, (id) => ({
        report_id: id,
        report_type: "enterprise_audit",
        sku_id: SKU,
        target: input.target!,
        owner: input.owner,
        agent_id: input.agent_id!,
        agent_name: input.agent_name,
        subject: { agent_id: input.agent_id! },
        scope: input.scope,
        evidence_class: details.evidence.class,
        files: fileRefs(input),
        auditors: AUDITORS.length,
        findings_summary: findingsSummary(findings),
        score: { value: score.value, max: score.max, basis: score.basis },
        llm_review: { status: review.status, model: review.model, findings: review.findings.length },
        report_sha256: detailsSha256(details),
        report_sha256_rule: REPORT_HASH_RULE,
        payer: ctx.payer,
        payment_id: ctx.paymentId,
        audited_at: ctx.now.toISOString(),
      }));
      return { report_id: reportId, report: summary, details, proof };
    },
    // The report reaches the proof rail only with the delivered job.
    commit: (manager, deliverable, ctx) => commitAuditReport(manager, ctx.proofKey, deliverable),
  };
}

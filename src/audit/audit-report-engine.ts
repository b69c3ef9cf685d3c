import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { LlmEngine } from "../llm/llm-engine.js";
import type { SkuHandler } from "../skus/sku-handler.js";
import { AuditorSummarySchema, detailsSha256, EvidenceSchema, evidenceOf, FileRefSchema, fileRefs, REPORT_HASH_RULE } from "./audit-evidence.js";
import { AuditReportProofSchema, commitAuditReport, prepareAuditReport } from "./audit-report-record.js";
import { AuditSubjectInput, precheckAuditSubject, type AuditInput } from "./audit-subject.js";
import { auditFindings, auditorSummaries } from "./auditors.js";
import type { Auditor, Finding } from "./finding.js";
import { llmReview, LlmReviewSchema, type LlmReview } from "./llm-review.js";
import { auditScore, ScoreSchema } from "./score.js";

// What security.enterprise-audit and security.multi-agent-audit share: the audit subject payload and its
// precheck, the auditors' findings, the optional LLM review, the score, and a report whose summary is
// signed and recorded on the proof rail as kind 30105 with the delivered job. Each engine adds its own
// fields to the summary (after `files`) and to the details (after `auditors`).

/** The deliverable: the report summary (the rail record's body), its details and the proof block. */
export function auditReportOutput<T extends string, S extends string, R extends z.ZodRawShape, D extends z.ZodRawShape>(reportType: T, skuId: S, report: R, details: D) {
  return z.object({
    report_id: z.string(),
    report: z.object({
      report_id: z.string(),
      report_type: z.literal(reportType),
      sku_id: z.literal(skuId),
      target: z.string(),
      owner: z.string().nullable(),
      agent_id: z.string(),
      agent_name: z.string().nullable(),
      subject: z.object({ agent_id: z.string() }),
      scope: z.literal("full"),
      evidence_class: z.enum(["self_declared", "notarized_manifest", "observed_artifacts"]),
      files: z.array(FileRefSchema),
      ...report,
      score: z.object({ value: z.number(), max: z.literal(10), basis: z.enum(["observed_artifacts", "declaration_only"]) }),
      llm_review: z.object({ status: z.string(), model: z.string().nullable(), findings: z.number() }),
      report_sha256: z.string(),
      report_sha256_rule: z.string(),
      payer: z.string(),
      payment_id: z.string(),
      audited_at: z.string(),
    }),
    details: z.object({
      evidence: EvidenceSchema,
      auditors: z.array(AuditorSummarySchema),
      ...details,
      llm_review: LlmReviewSchema,
      score: ScoreSchema,
    }),
    proof: AuditReportProofSchema,
  });
}

/** What an engine's own fields are computed from. */
export interface AuditRun {
  input: AuditInput;
  findings: Finding[];
  suppressed: Record<string, number>;
  review: LlmReview;
}

export interface AuditReportSpec<T extends string> {
  skuId: string;
  reportType: T;
  poweredBy: string;
  output: z.ZodType;
  auditors: readonly Auditor[];
  /** The engine's summary fields (after `files`) and details fields (after `auditors`). */
  fields(run: AuditRun): { report: JsonObject; details: JsonObject };
}

export function auditReportEngine<T extends string>(llm: LlmEngine | undefined, spec: AuditReportSpec<T>): SkuHandler<AuditInput> {
  const { skuId } = spec;
  return {
    skuId,
    poweredBy: spec.poweredBy,
    input: AuditSubjectInput,
    output: spec.output,
    // The artifacts are the code under audit: an injection pattern in them is a finding, not a refusal.
    // The subject's declared fields are content-trap scanned in the precheck instead.
    inputScan: "off",
    precheck: async (input) => precheckAuditSubject(input, skuId),
    async run(input, ctx) {
      const { findings, suppressed } = auditFindings(input, spec.auditors);
      const review = await llmReview(llm, input.files, ctx.paymentId);
      const score = auditScore(findings, input.evidence_class!);
      const own = spec.fields({ input, findings, suppressed, review });
      const details = { evidence: evidenceOf(input), auditors: auditorSummaries(spec.auditors, findings), ...own.details, llm_review: review, score };
      const { reportId, summary, proof } = prepareAuditReport(ctx, (id) => ({
        report_id: id,
        report_type: spec.reportType,
        sku_id: skuId,
        target: input.target!,
        owner: input.owner,
        agent_id: input.agent_id!,
        agent_name: input.agent_name,
        subject: { agent_id: input.agent_id! },
        scope: input.scope,
        evidence_class: details.evidence.class,
        files: fileRefs(input),
        ...own.report,
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

import { z } from "zod";
import { findingsSummary, FindingsSummarySchema } from "../audit/audit-evidence.js";
import { auditReportEngine, auditReportOutput } from "../audit/audit-report-engine.js";
import type { AuditInput } from "../audit/audit-subject.js";
import { AUDITORS } from "../audit/auditors.js";
import { FindingSchema } from "../audit/finding.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import type { SkuHandler } from "./sku-handler.js";

// security.enterprise-audit: the 13-agent audit. Thirteen specialist static auditors (src/audit/analyzers,
// each with a published rule set) read the artifacts of the subject payload; an LLM reviewer adds labelled
// findings when a model is configured. Findings are scoped to the evidence class (only observed_artifacts
// can produce code findings), scored 0-10 by a published formula, and the signed report summary is
// recorded on the proof rail as kind 30105 (Merkle-anchored; `svc verify <proof_id>`). Secrets found are
// redacted when the input is parsed, so neither the job row, the report, the rail nor the model sees them.

const SKU = "security.enterprise-audit";

export const EnterpriseAuditOutput = auditReportOutput(
  "enterprise_audit",
  SKU,
  { auditors: z.number(), findings_summary: FindingsSummarySchema },
  { findings: z.array(FindingSchema), findings_suppressed: z.record(z.string(), z.number()) },
);

export function securityEnterpriseAudit(llm: LlmEngine | undefined): SkuHandler<AuditInput> {
  return auditReportEngine(llm, {
    skuId: SKU,
    reportType: "enterprise_audit",
    poweredBy: "svc-audit/13-static-auditors",
    output: EnterpriseAuditOutput,
    auditors: AUDITORS,
    fields: ({ findings, suppressed }) => ({
      report: { auditors: AUDITORS.length, findings_summary: findingsSummary(findings) },
      details: { findings, findings_suppressed: suppressed },
    }),
  });
}

import { z } from "zod";
import { applicability, ASI_CATEGORIES, ASI_FRAMEWORK, categoryRules } from "../audit/asi-categories.js";
import { asiChecks } from "../audit/asi-checks.js";
import { findingsSummary, FindingsSummarySchema } from "../audit/audit-evidence.js";
import { auditReportEngine, auditReportOutput } from "../audit/audit-report-engine.js";
import type { AuditInput } from "../audit/audit-subject.js";
import { AUDITORS, auditView } from "../audit/auditors.js";
import { observedCapabilities } from "../audit/capability-profile.js";
import { FindingSchema, type Finding } from "../audit/finding.js";
import { commitItems, FINDINGS_MERKLE_TREE } from "../audit/findings-merkle.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import type { SkuHandler } from "./sku-handler.js";

// security.multi-agent-audit: the audit by the thirteen auditor agents plus category checks, reported
// against the ten OWASP agentic risk categories (ASI01 to ASI10, shipped as data). Each category is
// `findings`, `covered` (its checks ran over examined code and found nothing), `not_applicable` (the
// examined artifacts have nothing it concerns, with the reason) or `not_assessed` (no code was examined:
// self_declared or notarized_manifest). Every category result and every finding is a leaf of a Merkle
// tree whose root is in the signed report, recorded on the proof rail as kind 30105: it is an audit
// report about the subject (as the enterprise audit's), not a notarization of someone else's audit
// (30110), and the trust layer counts it among the agent's audit reports.

const SKU = "security.multi-agent-audit";
const ASI_STATUS = z.enum(["findings", "covered", "not_applicable", "not_assessed"]);
const Leaf = { leaf: z.string(), proof: z.array(z.string()) };

export const MultiAgentAuditOutput = auditReportOutput(
  "multi_agent_audit",
  SKU,
  {
    framework: z.object({ name: z.string(), source: z.string() }),
    categories: z.array(z.object({ id: z.string(), name: z.string(), status: ASI_STATUS, findings: z.number() })),
    findings_summary: FindingsSummarySchema,
    findings_merkle_root: z.string(),
    merkle_leaves: z.number(),
    merkle_tree: z.string(),
  },
  {
    categories: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        summary: z.string(),
        status: ASI_STATUS,
        reason: z.string().nullable(),
        checks: z.array(z.string()),
        finding_ids: z.array(z.string()),
        ...Leaf,
      }),
    ),
    findings: z.array(FindingSchema.extend(Leaf)),
    findings_suppressed: z.record(z.string(), z.number()),
    merkle: z.object({ root: z.string(), tree: z.string(), leaves: z.number() }),
  },
);

const MULTI_AUDITORS = [...AUDITORS, asiChecks];

/** Each category's result over the findings and what was examined. */
function categoryResults(input: AuditInput, findings: Finding[]) {
  const view = auditView(input);
  const codeExamined = input.evidence_class === "observed_artifacts" && view.files.length > 0;
  const applies = applicability(view, new Set(observedCapabilities(view.files).keys()));
  return ASI_CATEGORIES.map((c) => {
    const ids = findings.filter((f) => f.asi.includes(c.id)).map((f) => f.id);
    const notApplicable = applies.get(c.id);
    const status = ids.length ? "findings" : !codeExamined ? "not_assessed" : notApplicable ? "not_applicable" : "covered";
    const reason =
      status === "findings"
        ? null
        : status === "not_assessed"
          ? `no code was examined (${input.evidence_class}): the category's checks need the artifacts' content`
          : status === "not_applicable"
            ? notApplicable!
            : `${categoryRules(c).length} checks ran over ${view.files.length} examined file(s) and found nothing`;
    return { id: c.id, name: c.name, summary: c.summary, status, reason, checks: categoryRules(c), finding_ids: ids } as const;
  });
}

export function securityMultiAgentAudit(llm: LlmEngine | undefined): SkuHandler<AuditInput> {
  return auditReportEngine(llm, {
    skuId: SKU,
    reportType: "multi_agent_audit",
    poweredBy: "svc-audit/asi-top10",
    output: MultiAgentAuditOutput,
    auditors: MULTI_AUDITORS,
    fields({ input, findings, suppressed }) {
      const categories = categoryResults(input, findings);
      const committed = commitItems([...categories.map((c) => ({ category: c.id, name: c.name, status: c.status, finding_ids: c.finding_ids })), ...findings]);
      return {
        report: {
          framework: ASI_FRAMEWORK,
          categories: categories.map((c) => ({ id: c.id, name: c.name, status: c.status, findings: c.finding_ids.length })),
          findings_summary: findingsSummary(findings),
          findings_merkle_root: committed.root,
          merkle_leaves: committed.proofs.length,
          merkle_tree: FINDINGS_MERKLE_TREE,
        },
        details: {
          categories: categories.map((c, i) => ({ ...c, checks: [...c.checks], finding_ids: [...c.finding_ids], ...committed.proofs[i]! })),
          findings: findings.map((f, i) => ({ ...f, ...committed.proofs[categories.length + i]! })),
          findings_suppressed: suppressed,
          merkle: { root: committed.root, tree: FINDINGS_MERKLE_TREE, leaves: committed.proofs.length },
        },
      };
    },
  });
}

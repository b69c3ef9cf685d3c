import { capabilityMismatchAuditor } from "./analyzers/capability-mismatch.js";
import { dependenciesAuditor } from "./analyzers/dependencies.js";
import { endpointAuthAuditor } from "./analyzers/endpoint-auth.js";
import { injectionAuditor } from "./analyzers/injection.js";
import { networkEgressAuditor } from "./analyzers/network-egress.js";
import { piiRetentionAuditor } from "./analyzers/pii-retention.js";
import { promptInjectionAuditor } from "./analyzers/prompt-injection.js";
import { resourceBoundsAuditor } from "./analyzers/resource-bounds.js";
import { secretsAuditor } from "./analyzers/secrets.js";
import { sensitiveLoggingAuditor } from "./analyzers/sensitive-logging.js";
import { toolPermissionsAuditor } from "./analyzers/tool-permissions.js";
import { unsafeEvalAuditor } from "./analyzers/unsafe-eval.js";
import { weakCryptoAuditor } from "./analyzers/weak-crypto.js";
import { asiCategoriesOf } from "./asi-categories.js";
import type { AuditInput } from "./audit-subject.js";
import { SEVERITIES, type Auditor, type AuditView, type Finding, type RuleDef } from "./finding.js";
import { sourceFile } from "./source-file.js";

// The thirteen specialist auditors, in a fixed order, and how their hits become findings: each hit takes
// its rule's title, severity and recommendation, the file's basename and SHA-256, and the agentic risk
// categories its rule falls under; duplicates (same rule, file and line) are dropped; a rule lists at most
// 25 findings (the rest are counted in `findings_suppressed`); findings are sorted by severity, then file
// and line, and numbered F-001, F-002…

export const AUDITORS: readonly Auditor[] = [
  secretsAuditor,
  promptInjectionAuditor,
  toolPermissionsAuditor,
  networkEgressAuditor,
  dependenciesAuditor,
  endpointAuthAuditor,
  sensitiveLoggingAuditor,
  unsafeEvalAuditor,
  injectionAuditor,
  weakCryptoAuditor,
  piiRetentionAuditor,
  resourceBoundsAuditor,
  capabilityMismatchAuditor,
];

/** The view every auditor reads: the examined files (indexed as in `input.files`) and the declaration. */
export function auditView(input: AuditInput): AuditView {
  return { files: input.files.map(sourceFile).filter((_, i) => input.files[i]!.examined), declaredCapabilities: input.declared_capabilities };
}

const rank = (s: Finding["severity"]) => SEVERITIES.indexOf(s);

/** A rule reports at most this many findings; further occurrences are counted, not listed. */
export const MAX_FINDINGS_PER_RULE = 25;

/** The findings of `auditors` over the subject, plus the findings the buyer declared. */
export function runAuditors(input: AuditInput, auditors: readonly Auditor[]): Finding[] {
  return auditFindings(input, auditors).findings;
}

/** The findings, and per rule how many further occurrences were left out of the list. */
export function auditFindings(input: AuditInput, auditors: readonly Auditor[]): { findings: Finding[]; suppressed: Record<string, number> } {
  const view = auditView(input);
  const rules = new Map<string, { auditor: string; rule: RuleDef }>();
  for (const a of auditors) for (const r of a.rules) rules.set(r.id, { auditor: a.id, rule: r });
  const seen = new Set<string>();
  const perRule = new Map<string, number>();
  const suppressed: Record<string, number> = {};
  const found: Omit<Finding, "id">[] = [];
  for (const a of auditors) {
    for (const h of a.analyze(view)) {
      const key = `${h.rule}|${h.file ?? ""}|${h.line ?? ""}|${h.file === undefined ? h.evidence : ""}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const n = (perRule.get(h.rule) ?? 0) + 1;
      perRule.set(h.rule, n);
      if (n > MAX_FINDINGS_PER_RULE) {
        suppressed[h.rule] = (suppressed[h.rule] ?? 0) + 1;
        continue;
      }
      const { rule } = rules.get(h.rule)!;
      const file = h.file === undefined ? undefined : input.files[h.file]!;
      const finding = {
        auditor: a.id,
        rule: rule.id,
        severity: h.severity ?? rule.severity,
        title: rule.title,
        file: file?.name ?? null,
        file_sha256: file?.sha256 ?? null,
        line: h.line ?? null,
        evidence: h.evidence,
        recommendation: rule.recommendation,
        basis: h.basis ?? "static",
        asi: [] as string[],
      };
      finding.asi = asiCategoriesOf(finding);
      found.push(finding);
    }
  }
  for (const d of input.declared_findings) {
    const file = d.file === null ? undefined : input.files.find((f) => f.name === d.file);
    found.push({
      auditor: "declared",
      rule: "declared.finding",
      severity: d.severity,
      title: d.title,
      file: d.file,
      file_sha256: file?.sha256 ?? null,
      line: null,
      evidence: d.detail ?? "declared by the buyer; not verified by the service",
      recommendation: "as declared by the buyer",
      basis: "declared",
      asi: [],
    });
  }
  const index = (f: Omit<Finding, "id">) => (f.file === null ? -1 : input.files.findIndex((x) => x.name === f.file && x.sha256 === f.file_sha256));
  found.sort((x, y) => rank(x.severity) - rank(y.severity) || index(x) - index(y) || (x.line ?? 0) - (y.line ?? 0) || x.rule.localeCompare(y.rule));
  return { findings: found.map((f, i) => ({ id: `F-${String(i + 1).padStart(3, "0")}`, ...f })), suppressed };
}

/** Each auditor's published rule set and its finding count, for the report. */
export function auditorSummaries(auditors: readonly Auditor[], findings: Finding[]) {
  return auditors.map((a) => ({
    id: a.id,
    name: a.name,
    summary: a.summary,
    rules: a.rules.map((r) => ({ id: r.id, severity: r.severity, title: r.title, detects: r.detects })),
    findings: findings.filter((f) => f.auditor === a.id).length,
  }));
}

import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "../platform/canonical-json.js";
import type { AuditInput, EvidenceClass } from "./audit-subject.js";
import { SEVERITIES } from "./finding.js";
import { LANGUAGES } from "./source-file.js";

// What an audit report says about its evidence: the class, which files were supplied (basename, SHA-256,
// size) and which were examined, and what the class allows the report to conclude.

export const FileRefSchema = z.object({ name: z.string(), sha256: z.string(), bytes: z.number().nullable(), examined: z.boolean() });

export const EvidenceSchema = z.object({
  class: z.enum(["self_declared", "notarized_manifest", "observed_artifacts"]),
  class_source: z.enum(["declared", "inferred"]),
  code_findings_possible: z.boolean(),
  note: z.string(),
  files: z.array(FileRefSchema.extend({ language: z.enum(LANGUAGES), not_examined: z.string().nullable() })),
  files_examined: z.number(),
  declared_capabilities: z.array(z.string()),
  secrets_redacted: z.number(),
});

export const AuditorSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  summary: z.string(),
  rules: z.array(z.object({ id: z.string(), severity: z.enum(SEVERITIES), title: z.string(), detects: z.string() })),
  findings: z.number(),
});

export const FindingsSummarySchema = z.object({
  total: z.number(),
  critical: z.number(),
  high: z.number(),
  medium: z.number(),
  low: z.number(),
  info: z.number(),
  by_auditor: z.record(z.string(), z.number()),
});

const NOTES: Record<Exclude<EvidenceClass, "local_disk">, (examined: number, skipped: number) => string> = {
  self_declared: () =>
    "self_declared: a notarized self-declaration, not an audit. Only the declared capabilities were read; no code was supplied, so no code findings are possible. Findings come from checks of the declaration and from findings the buyer declared.",
  notarized_manifest: () =>
    "notarized_manifest: file hashes only. The report notarizes which files (by SHA-256) were declared, for tamper-evidence; no file content was examined (content sent was hashed and discarded), so no code findings are possible. Findings are as declared.",
  observed_artifacts: (examined, skipped) =>
    `observed_artifacts: the bytes of ${examined} file(s) were examined by the static auditors; findings cover only those files${skipped ? ` (${skipped} supplied file(s) were not examined: see not_examined)` : ""}. Nothing outside the supplied artifacts was seen.`,
};

export function evidenceOf(input: AuditInput) {
  const cls = input.evidence_class as Exclude<EvidenceClass, "local_disk">;
  const examined = input.files.filter((f) => f.examined).length;
  return {
    class: cls,
    class_source: input.evidence_class_source,
    code_findings_possible: cls === "observed_artifacts",
    note: NOTES[cls](examined, input.files.length - examined),
    files: input.files.map((f) => ({ name: f.name, sha256: f.sha256, bytes: f.bytes, examined: f.examined, language: f.language, not_examined: f.not_examined })),
    files_examined: examined,
    declared_capabilities: input.declared_capabilities,
    secrets_redacted: input.files.reduce((n, f) => n + f.secrets.length, 0),
  };
}

export const fileRefs = (input: AuditInput) => input.files.map((f) => ({ name: f.name, sha256: f.sha256, bytes: f.bytes, examined: f.examined }));

export function findingsSummary(findings: { severity: string; auditor: string }[]) {
  const out = { total: findings.length, critical: 0, high: 0, medium: 0, low: 0, info: 0, by_auditor: {} as Record<string, number> };
  for (const f of findings) {
    out[f.severity as "critical"]++;
    out.by_auditor[f.auditor] = (out.by_auditor[f.auditor] ?? 0) + 1;
  }
  return out;
}

/** SHA-256 of the RFC 8785 canonical JSON of the report's details: the rail record commits to them. */
export const detailsSha256 = (details: unknown) => createHash("sha256").update(canonicalJson(details), "utf8").digest("hex");

export const REPORT_HASH_RULE = "report_sha256 = SHA-256 (hex) of the RFC 8785 canonical JSON of the deliverable's `details`";

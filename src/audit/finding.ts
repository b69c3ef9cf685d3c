import { z } from "zod";
import type { SourceFile } from "./source-file.js";

// What every auditor reports: findings tied to a rule of its documented rule set, a supplied file (by
// basename and SHA-256) and a line, with a short excerpt taken from the already-redacted text.

export const SEVERITIES = ["critical", "high", "medium", "low", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One rule of an auditor's rule set: what it flags, how bad it is, what to do about it. */
export interface RuleDef {
  id: string;
  severity: Severity;
  title: string;
  /** How the rule decides (published with the report, so a finding can be checked by hand). */
  detects: string;
  recommendation: string;
}

/** A rule's hit, before the engine attaches the rule's title, severity and the file's identity. */
export interface Hit {
  rule: string;
  /** Index into the subject's files; undefined for findings about the declaration itself. */
  file?: number;
  /** 1-based line, when the hit has one. */
  line?: number;
  /** What was seen: an excerpt of redacted text, or a description. */
  evidence: string;
  /** A severity above or below the rule's default, for a reason stated in `evidence`. */
  severity?: Severity;
  /** `declared` when the hit reads the buyer's declaration, not the artifacts (default `static`). */
  basis?: "static" | "declared";
}

/** What auditors read: the examined files (with their index among the supplied files) and the declaration. */
export interface AuditView {
  files: SourceFile[];
  declaredCapabilities: string[];
}

export interface Auditor {
  id: string;
  name: string;
  /** One line: what the auditor looks for. */
  summary: string;
  rules: RuleDef[];
  analyze(view: AuditView): Hit[];
}

export const FindingSchema = z.object({
  id: z.string(),
  auditor: z.string(),
  rule: z.string(),
  severity: z.enum(SEVERITIES),
  title: z.string(),
  file: z.string().nullable(),
  file_sha256: z.string().nullable(),
  line: z.number().nullable(),
  evidence: z.string(),
  recommendation: z.string(),
  /** `static`: a rule matched the supplied artifacts; `declared`: a rule matched the buyer's declaration. */
  basis: z.enum(["static", "declared"]),
  asi: z.array(z.string()),
});
export type Finding = z.infer<typeof FindingSchema>;

const EXCERPT_MAX = 160;

/** A line as evidence: trimmed and cut short (the text is already redacted). */
export function excerpt(line: string): string {
  const t = line.trim().replace(/\s+/g, " ");
  return t.length > EXCERPT_MAX ? `${t.slice(0, EXCERPT_MAX - 1)}…` : t;
}

import { createHash } from "node:crypto";
import { canonicalJson } from "../platform/canonical-json.js";

// Checking an audit's claims against the audit report the buyer supplies. A JSON report is read field by
// field (common names for each fact, at the top or inside `audit`); a text report can only show whether it
// names the deliverable's hash. A claim the report does not state is `matches: null`, never a pass.

export interface AuditClaims {
  auditor: string;
  deliverableSha256: string;
  scope: string;
  standard?: string;
  performedAt: string;
  result: string;
  findings?: Record<string, number>;
}

export type ClaimCheck = {
  claim: string;
  claimed: string;
  reported: string | null;
  matches: boolean | null;
};

export type EvidenceClass = "observed_report" | "declared_report_hash" | "self_declared";

const ALIASES: Record<string, string[]> = {
  deliverable_sha256: ["deliverable_sha256", "content_sha256", "artifact_sha256", "subject_sha256", "sha256"],
  auditor: ["auditor", "audited_by"],
  result: ["result", "verdict", "outcome"],
  performed_at: ["performed_at", "audited_at", "completed_at", "date"],
  scope: ["scope"],
  standard: ["standard", "framework"],
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The report as an object when it is JSON, else its text. */
export function readReport(report: string | Obj): Obj | string {
  if (isObj(report)) return report;
  try {
    const parsed = JSON.parse(report) as unknown;
    return isObj(parsed) ? parsed : report;
  } catch {
    return report;
  }
}

/** SHA-256 hex of the report: of its text as given, or of the canonical JSON of an object. */
export function reportSha256(report: string | Obj): string {
  return createHash("sha256").update(typeof report === "string" ? report : canonicalJson(report), "utf8").digest("hex");
}

function field(report: Obj, claim: string): unknown {
  for (const scope of [report, isObj(report.audit) ? report.audit : {}]) {
    for (const name of ALIASES[claim] ?? [claim]) if (scope[name] !== undefined && scope[name] !== null) return scope[name];
  }
  return undefined;
}

function findingCounts(v: unknown): Record<string, number> | undefined {
  if (Array.isArray(v)) {
    const counts: Record<string, number> = {};
    for (const f of v) {
      const severity = isObj(f) && typeof f.severity === "string" ? f.severity.toLowerCase() : "unspecified";
      counts[severity] = (counts[severity] ?? 0) + 1;
    }
    return counts;
  }
  if (isObj(v)) return Object.fromEntries(Object.entries(v).filter(([, n]) => typeof n === "number").map(([k, n]) => [k.toLowerCase(), n as number]));
  return undefined;
}

const same = (claim: string, a: string, b: string) =>
  claim === "performed_at" ? !Number.isNaN(Date.parse(b)) && Date.parse(a) === Date.parse(b) : a.trim().toLowerCase() === b.trim().toLowerCase();

export function checkClaims(c: AuditClaims, report: Obj | string | undefined): ClaimCheck[] {
  const claimed: [string, string | undefined][] = [
    ["deliverable_sha256", c.deliverableSha256],
    ["auditor", c.auditor],
    ["result", c.result],
    ["performed_at", c.performedAt],
    ["scope", c.scope],
    ["standard", c.standard],
  ];
  const checks: ClaimCheck[] = [];
  for (const [claim, value] of claimed) {
    if (value === undefined) continue;
    if (report === undefined) {
      checks.push({ claim, claimed: value, reported: null, matches: null });
    } else if (typeof report === "string") {
      // Only the hash can be found in free text.
      checks.push(claim === "deliverable_sha256" ? { claim, claimed: value, reported: report.toLowerCase().includes(value) ? value : null, matches: report.toLowerCase().includes(value) } : { claim, claimed: value, reported: null, matches: null });
    } else {
      const found = field(report, claim);
      const reported = typeof found === "string" || typeof found === "number" ? String(found) : null;
      checks.push({ claim, claimed: value, reported, matches: reported === null ? null : same(claim, value, reported) });
    }
  }
  const reportedFindings = typeof report === "object" ? findingCounts(field(report, "findings")) : undefined;
  for (const [severity, n] of Object.entries(c.findings ?? {})) {
    const reported = reportedFindings ? (reportedFindings[severity.toLowerCase()] ?? 0) : undefined;
    checks.push({ claim: `findings.${severity}`, claimed: String(n), reported: reported === undefined ? null : String(reported), matches: reported === undefined ? null : reported === n });
  }
  return checks;
}

/** Whether the checked claims all match: null when nothing could be checked. */
export function claimsMatch(checks: ClaimCheck[]): boolean | null {
  const checked = checks.filter((c) => c.matches !== null);
  return checked.length ? checked.every((c) => c.matches) : null;
}

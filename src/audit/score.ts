import { z } from "zod";
import type { EvidenceClass } from "./audit-subject.js";
import { SEVERITIES, type Finding, type Severity } from "./finding.js";

// The 0-10 audit score (higher is safer), computed in integer tenths so it is exact:
//   score = max(0, 100 − Σ deduction) / 10, deduction per finding: critical 30, high 15, medium 5, low 1,
//   info 0 tenths; each rule counts at most 3 times (a pattern repeated across a codebase is one problem
//   seen many times, not an unbounded one). Counted: static and declared findings; never LLM review findings.

const DEDUCTION_TENTHS: Record<Severity, number> = { critical: 30, high: 15, medium: 5, low: 1, info: 0 };
const PER_RULE = 3;

export const SCORE_FORMULA =
  "10 − (3.0 × critical + 1.5 × high + 0.5 × medium + 0.1 × low) over the static and declared findings, each rule counted at most 3 times, floored at 0; info findings and LLM review findings are not counted";

export const ScoreSchema = z.object({
  value: z.number(),
  max: z.literal(10),
  basis: z.enum(["observed_artifacts", "declaration_only"]),
  basis_note: z.string(),
  formula: z.string(),
  counted: z.object({ critical: z.number(), high: z.number(), medium: z.number(), low: z.number(), info: z.number() }),
  deducted: z.number(),
});

function severityCounts(findings: Pick<Finding, "severity">[]) {
  const counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
  for (const f of findings) counts[f.severity]++;
  return counts;
}

export function auditScore(findings: Finding[], evidenceClass: EvidenceClass) {
  const perRule = new Map<string, number>();
  const counted: Finding[] = [];
  for (const f of findings) {
    const n = perRule.get(f.rule) ?? 0;
    perRule.set(f.rule, n + 1);
    if (n < PER_RULE || f.rule === "declared.finding") counted.push(f);
  }
  const deducted = counted.reduce((sum, f) => sum + DEDUCTION_TENTHS[f.severity], 0);
  const tenths = Math.max(0, 100 - deducted);
  const observed = evidenceClass === "observed_artifacts";
  return {
    value: tenths / 10,
    max: 10 as const,
    basis: observed ? ("observed_artifacts" as const) : ("declaration_only" as const),
    basis_note: observed
      ? "findings of the static auditors over the examined files (and any findings the buyer declared); files not examined are not covered"
      : `${evidenceClass}: no code was examined, so the score reflects only checks of the declaration and findings the buyer declared; it is not evidence that the code is safe`,
    formula: SCORE_FORMULA,
    counted: severityCounts(counted),
    deducted: deducted / 10,
  };
}

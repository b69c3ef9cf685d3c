import { quoteSources } from "./grounding.js";
import { riskScore, type RiskLevel, type Severity } from "./risk-score.js";
import type { Material } from "./vendor-input.js";
import { CATEGORY_IDS, type Category, type ModelAssessment } from "./vetting-prompt.js";

// Turns the model's findings into the report's categories: each finding numbered, its evidence checked
// against the supplied materials, and only grounded findings counted in the score. A red flag is a
// counted finding of high or critical severity, or one the assessor flagged.

export interface Finding {
  id: string;
  severity: Severity;
  title: string;
  detail: string;
  basis: "stated" | "absent";
  evidence: string;
  /** Sources the quoted evidence was found in (empty for an absence or an ungrounded quote). */
  found_in: string[];
  /** Stated findings: whether the quote is in the supplied materials; absences: null. */
  grounded: boolean | null;
  counted: boolean;
  red_flag: boolean;
}

export interface CategoryReport {
  category: Category;
  information: "supplied" | "none";
  score: number;
  summary: string;
  findings: Finding[];
}

export interface RedFlag {
  finding_id: string;
  category: Category;
  severity: Severity;
  title: string;
  reason: string;
}

export interface Assessment {
  risk_score: number;
  risk_level: RiskLevel;
  categories: CategoryReport[];
  red_flags: RedFlag[];
  ungrounded_findings: number;
}

export function assess(answer: ModelAssessment, materials: readonly Material[]): Assessment {
  let n = 0;
  const categories = CATEGORY_IDS.map((category) => {
    const c = answer[category];
    const findings: Finding[] = c.findings.map((f) => {
      const foundIn = f.basis === "stated" ? quoteSources(f.evidence, materials) : [];
      const grounded = f.basis === "stated" ? foundIn.length > 0 : null;
      const counted = grounded !== false;
      return { id: `F${++n}`, severity: f.severity, title: f.title, detail: f.detail, basis: f.basis, evidence: f.evidence, found_in: foundIn, grounded, counted, red_flag: counted && (f.red_flag || f.severity === "high" || f.severity === "critical") };
    });
    return { category, information: c.information, summary: c.summary, findings };
  });
  const score = riskScore(categories.map((c) => ({ informed: c.information === "supplied", severities: c.findings.filter((f) => f.counted).map((f) => f.severity) })));
  const redFlags = categories.flatMap((c) =>
    c.findings.filter((f) => f.red_flag).map((f) => ({
      finding_id: f.id,
      category: c.category,
      severity: f.severity,
      title: f.title,
      reason: f.severity === "high" || f.severity === "critical" ? `${f.severity} severity` : "flagged by the assessor as to resolve before contracting",
    })),
  );
  return {
    risk_score: score.score,
    risk_level: score.level,
    categories: categories.map((c, i) => ({ ...c, score: score.categories[i]! })),
    red_flags: redFlags,
    ungrounded_findings: categories.reduce((s, c) => s + c.findings.filter((f) => f.grounded === false).length, 0),
  };
}

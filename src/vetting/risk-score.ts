// The vendor risk score (0-10), computed from the severities of the findings, never a number a model
// states. In tenths (integers), so the result is exact and reproducible:
//   finding points:  low 1, medium 3, high 6, critical 10
//   category score:  its highest finding + a quarter of the rest (half up), at most 10; a category the
//                    supplied details say nothing about, with no finding, scores 3 (an unknown is a risk)
//   risk score:      the highest category + a tenth of the other categories' scores (half up), at most 10
//   risk level:      low < 3, moderate < 5, high < 7.5, critical from 7.5

export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SEVERITY_POINTS: Record<Severity, number> = { low: 1, medium: 3, high: 6, critical: 10 };
export const UNASSESSED_POINTS = 3;
export const LEVELS = [
  { level: "low", below: 3 },
  { level: "moderate", below: 5 },
  { level: "high", below: 7.5 },
  { level: "critical", below: Infinity },
] as const;
export type RiskLevel = (typeof LEVELS)[number]["level"];

export const SCORING_RULES = {
  severity_points: SEVERITY_POINTS,
  unassessed_category_points: UNASSESSED_POINTS,
  category_rule: "highest finding's points + 1/4 of the other findings' points (rounded half up to 0.1), capped at 10; a category with no information supplied and no finding scores 3",
  overall_rule: "highest category score + 1/10 of the other categories' scores (rounded half up to 0.1), capped at 10",
  levels: "low < 3, moderate < 5, high < 7.5, critical >= 7.5",
  counted: "only findings grounded in the supplied details count (a quoted passage found in them, or a stated absence)",
};

export interface CategoryInput {
  /** Whether the supplied details say anything about this category. */
  informed: boolean;
  /** Severities of the category's counted findings. */
  severities: readonly Severity[];
}

const tenths = (s: Severity) => SEVERITY_POINTS[s] * 10;
/** a / b rounded half up, for non-negative integers. */
const divRound = (a: number, b: number) => Math.floor((2 * a + b) / (2 * b));

/** A category's score in tenths (0..100). */
export function categoryTenths(c: CategoryInput): number {
  if (!c.severities.length) return c.informed ? 0 : UNASSESSED_POINTS * 10;
  const points = c.severities.map(tenths).sort((a, b) => b - a);
  const rest = points.slice(1).reduce((s, p) => s + p, 0);
  return Math.min(100, points[0]! + divRound(rest, 4));
}

/** The overall score in tenths (0..100) from the categories' scores in tenths. */
export function overallTenths(categories: readonly number[]): number {
  if (!categories.length) return 0;
  const top = Math.max(...categories);
  const rest = categories.reduce((s, c) => s + c, 0) - top;
  return Math.min(100, top + divRound(rest, 10));
}

export function levelOf(score: number): RiskLevel {
  return LEVELS.find((l) => score < l.below)!.level;
}

export interface RiskScore {
  score: number;
  level: RiskLevel;
  categories: number[];
}

export function riskScore(categories: readonly CategoryInput[]): RiskScore {
  const per = categories.map(categoryTenths);
  const score = overallTenths(per) / 10;
  return { score, level: levelOf(score), categories: per.map((t) => t / 10) };
}

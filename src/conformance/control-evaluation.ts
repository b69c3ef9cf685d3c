import type { ConformanceData, Framework } from "./frameworks.js";
import type { FactReading, Reading } from "./posture-reading.js";

// Per control: met / partially_met / not_addressed / not_applicable, from the readings of the facts it
// requires (the rules are the README's):
//   - a fact's state comes from one source, in this order of precedence: direct posture keys, then
//     posture details (a key under the fact's key), then statements. Within that source the strongest
//     reading wins (affirmed > partial > denied); affirmed and denied together read as partial (the
//     declaration contradicts itself); only "not applicable" readings make the fact not_applicable;
//     no reading at all leaves it unstated. Contradictions across sources are listed as conflicts.
//   - a control the buyer declares not applicable, or whose every fact is not_applicable, is
//     not_applicable; otherwise, over its other facts: all affirmed -> met; at least one affirmed or
//     partial -> partially_met; none -> not_addressed.
// Coverage = (met + 0.5 x partially_met) / applicable controls, as a percentage with one decimal.

export type FactState = Reading | "unstated";
export type ControlStatus = "met" | "partially_met" | "not_addressed" | "not_applicable";

const RANK: Record<Exclude<Reading, "not_applicable">, number> = { affirmed: 3, partial: 2, denied: 1 };

export function factState(readings: FactReading[]): FactState {
  const direct = readings.filter((r) => r.source === "posture" && !r.detail);
  const details = readings.filter((r) => r.source === "posture" && r.detail);
  const statements = readings.filter((r) => r.source === "statement");
  const primary = direct.length ? direct : details.length ? details : statements;
  if (!primary.length) return "unstated";
  const stated = primary.filter((r): r is FactReading & { reading: Exclude<Reading, "not_applicable"> } => r.reading !== "not_applicable");
  if (!stated.length) return "not_applicable";
  if (stated.some((r) => r.reading === "affirmed") && stated.some((r) => r.reading === "denied")) return "partial";
  return stated.reduce((best, r) => (RANK[r.reading] > RANK[best] ? r.reading : best), stated[0]!.reading);
}

export type EvaluatedControl = {
  id: string;
  function: string;
  title: string;
  status: ControlStatus;
  facts: { fact: string; title: string; state: FactState; evidence: Omit<FactReading, "fact" | "detail">[] }[];
  missing: { fact: string; title: string; state: FactState }[];
  not_applicable_reason: string | null;
};

export type Coverage = {
  controls: number;
  applicable: number;
  met: number;
  partially_met: number;
  not_addressed: number;
  not_applicable: number;
  /** (met + 0.5 x partially_met) / applicable, percent, one decimal; null when nothing is applicable. */
  coverage_pct: number | null;
  /** met / applicable, percent, one decimal. */
  met_pct: number | null;
};

const pct = (n: number, d: number) => (d ? Math.round((1000 * n) / d) / 10 : null);

export function coverageOf(controls: EvaluatedControl[]): Coverage {
  const count = (s: ControlStatus) => controls.filter((c) => c.status === s).length;
  const [met, partial, none, na] = [count("met"), count("partially_met"), count("not_addressed"), count("not_applicable")];
  const applicable = controls.length - na;
  return { controls: controls.length, applicable, met, partially_met: partial, not_addressed: none, not_applicable: na, coverage_pct: pct(met + partial / 2, applicable), met_pct: pct(met, applicable) };
}

export function evaluateControls(data: ConformanceData, framework: Framework, readings: FactReading[], declaredNotApplicable: Map<string, string>): EvaluatedControl[] {
  const byFact = new Map<string, FactReading[]>();
  for (const r of readings) byFact.set(r.fact, [...(byFact.get(r.fact) ?? []), r]);
  return framework.controls.map((c) => {
    const facts = c.requires.map((id) => {
      const rs = byFact.get(id) ?? [];
      return { fact: id, title: data.facts.get(id)!.title, state: factState(rs), evidence: rs.map(({ fact: _f, detail: _d, ...e }) => e) };
    });
    const declared = declaredNotApplicable.get(c.id);
    const relevant = facts.filter((f) => f.state !== "not_applicable");
    let status: ControlStatus;
    if (declared !== undefined || !relevant.length) status = "not_applicable";
    else if (relevant.every((f) => f.state === "affirmed")) status = "met";
    else if (relevant.some((f) => f.state === "affirmed" || f.state === "partial")) status = "partially_met";
    else status = "not_addressed";
    return {
      id: c.id,
      function: c.function,
      title: c.title,
      status,
      facts,
      missing: status === "not_applicable" ? [] : relevant.filter((f) => f.state !== "affirmed").map((f) => ({ fact: f.fact, title: f.title, state: f.state })),
      not_applicable_reason: declared !== undefined ? declared || "declared not applicable by the buyer" : !relevant.length ? "every fact this control requires was stated as not applicable" : null,
    };
  });
}

/** Facts whose readings contradict each other (some affirm, some deny), whichever source decided. */
export function conflictsOf(readings: FactReading[]): { fact: string; affirmed_by: string[]; denied_by: string[]; decided: FactState }[] {
  const facts = [...new Set(readings.map((r) => r.fact))];
  return facts.flatMap((fact) => {
    const rs = readings.filter((r) => r.fact === fact);
    const affirmed = rs.filter((r) => r.reading === "affirmed").map((r) => r.location);
    const denied = rs.filter((r) => r.reading === "denied").map((r) => r.location);
    return affirmed.length && denied.length ? [{ fact, affirmed_by: affirmed, denied_by: denied, decided: factState(rs) }] : [];
  });
}

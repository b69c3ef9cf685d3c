import { z } from "zod";
import { conformanceData, findFramework } from "../conformance/frameworks.js";
import { readPosture, readStatements } from "../conformance/posture-reading.js";
import { conflictsOf, coverageOf, evaluateControls } from "../conformance/control-evaluation.js";
import type { SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// security.conformance-check (async): maps the security posture a buyer STATES (a structured `posture`
// object and/or free-text `statements`) to the controls of a named governance framework shipped as data
// (NIST AI RMF 1.0 categories, NIST CSF 2.0 categories): per control met / partially met / not addressed
// / not applicable with the stated evidence that decided it, coverage figures and the gaps. It is a
// check of declarations (evidence class `self_declared`), never an audit: nothing is observed or tested.
// No model and no network: the matching rules are deterministic (src/conformance/*).

const MAX_POSTURE_LEAVES = 500;

const NotApplicable = z.union([z.string().trim().min(1).max(32), z.object({ control: z.string().trim().min(1).max(32), reason: z.string().trim().max(500).optional() }).loose()]);

const Fields = z
  .object({
    framework: z.string().trim().min(1).max(80),
    posture: z.record(z.string().max(200), z.unknown()).optional(),
    statements: z.array(z.string().trim().min(1).max(2000)).max(100).optional(),
    not_applicable: z.array(NotApplicable).max(100).optional(),
    subject: z.string().trim().min(1).max(200).optional(),
  })
  .loose();
type Input = z.infer<typeof Fields>;

const controlOf = (n: z.infer<typeof NotApplicable>) => (typeof n === "string" ? n : n.control);
const sameControl = (a: string, b: string) => a.toUpperCase().replace(/\s+/g, " ") === b.toUpperCase().replace(/\s+/g, " ");

function countLeaves(v: unknown, depth = 0): number {
  if (v && typeof v === "object" && !Array.isArray(v) && depth < 4) return Object.values(v).reduce<number>((s, x) => s + countLeaves(x, depth + 1), 0);
  return 1;
}

const Input = Fields.superRefine((v, ctx) => {
  const data = conformanceData();
  const fw = findFramework(data, v.framework);
  if (!fw) ctx.addIssue({ code: "custom", path: ["framework"], message: `unknown framework ${v.framework}; supported: ${data.frameworks.map((f) => `${f.id} (${f.name} ${f.version})`).join(", ")}` });
  const hasPosture = v.posture !== undefined && Object.keys(v.posture).length > 0;
  if (!hasPosture && !v.statements?.length) ctx.addIssue({ code: "custom", path: ["posture"], message: "state the posture to check: a non-empty `posture` object and/or `statements`" });
  if (v.posture && countLeaves(v.posture) > MAX_POSTURE_LEAVES) ctx.addIssue({ code: "custom", path: ["posture"], message: `at most ${MAX_POSTURE_LEAVES} posture values` });
  if (fw) {
    v.not_applicable?.forEach((n, i) => {
      if (!fw.controls.some((c) => sameControl(c.id, controlOf(n)))) ctx.addIssue({ code: "custom", path: ["not_applicable", i], message: `${controlOf(n)} is not a control of ${fw.id}` });
    });
  }
});

const Source = z.object({ publisher: z.string(), document: z.string(), published: z.string(), url: z.string() });
const FactState = z.enum(["affirmed", "partial", "denied", "not_applicable", "unstated"]);
const ControlStatus = z.enum(["met", "partially_met", "not_addressed", "not_applicable"]);
const CoverageOut = z.object({
  controls: z.number().int(),
  applicable: z.number().int(),
  met: z.number().int(),
  partially_met: z.number().int(),
  not_addressed: z.number().int(),
  not_applicable: z.number().int(),
  coverage_pct: z.number().nullable(),
  met_pct: z.number().nullable(),
});
const Evidence = z.object({
  source: z.enum(["posture", "statement"]),
  location: z.string(),
  value: z.string(),
  matched: z.string(),
  reading: z.enum(["affirmed", "partial", "denied", "not_applicable"]),
});
const Missing = z.object({ fact: z.string(), title: z.string(), state: FactState });

export const ConformanceOutput = z.object({
  framework: z.object({ id: z.string(), name: z.string(), version: z.string(), level: z.string(), source: Source }),
  subject: z.string().nullable(),
  evidence_class: z.literal("self_declared"),
  scope: z.string(),
  summary: CoverageOut,
  by_function: z.array(CoverageOut.extend({ function: z.string() })),
  controls: z.array(
    z.object({
      id: z.string(),
      function: z.string(),
      title: z.string(),
      status: ControlStatus,
      facts: z.array(z.object({ fact: z.string(), title: z.string(), state: FactState, evidence: z.array(Evidence) })),
      missing: z.array(Missing),
      not_applicable_reason: z.string().nullable(),
    }),
  ),
  gaps: z.array(z.object({ control: z.string(), title: z.string(), status: ControlStatus, missing: z.array(Missing) })),
  conflicts: z.array(z.object({ fact: z.string(), affirmed_by: z.array(z.string()), denied_by: z.array(z.string()), decided: FactState })),
  unmapped_posture_keys: z.array(z.string()),
  unmatched_statements: z.array(z.number().int()),
  matching_rules: z.object({ vocabulary_version: z.string(), description: z.string() }),
  checked_at: Iso,
});

export function securityConformanceCheck(): SkuHandler<Input> {
  const data = conformanceData();
  return {
    skuId: "security.conformance-check",
    poweredBy: "svc-conformance/stated-posture",
    input: Input,
    // The buyer's own posture statements are matched as data and never reach a model; "we never share
    // passwords" must not trip the secret-request rule.
    inputScan: "off",
    output: ConformanceOutput,
    async run(v, ctx) {
      const fw = findFramework(data, v.framework)!;
      const fromPosture = readPosture(data, v.posture ?? {});
      const fromStatements = readStatements(data, v.statements ?? []);
      const readings = [...fromPosture.readings, ...fromStatements.readings];
      const declared = new Map<string, string>();
      for (const n of v.not_applicable ?? []) {
        const control = fw.controls.find((c) => sameControl(c.id, controlOf(n)))!;
        declared.set(control.id, typeof n === "string" ? "" : (n.reason ?? ""));
      }
      const controls = evaluateControls(data, fw, readings, declared);
      const functions = [...new Set(fw.controls.map((c) => c.function))];
      return {
        framework: { id: fw.id, name: fw.name, version: fw.version, level: fw.level, source: fw.source },
        subject: v.subject ?? null,
        evidence_class: "self_declared",
        scope:
          "A check of the security posture the buyer stated (self-declared evidence), mapped to the framework's controls by documented matching rules. " +
          "It is not an audit and not a certification: nothing was observed, tested or verified, and a control reads as met only because the declaration says so.",
        summary: coverageOf(controls),
        by_function: functions.map((f) => ({ function: f, ...coverageOf(controls.filter((c) => c.function === f)) })),
        controls,
        gaps: controls.filter((c) => c.status === "not_addressed" || c.status === "partially_met").map((c) => ({ control: c.id, title: c.title, status: c.status, missing: c.missing })),
        conflicts: conflictsOf(readings),
        unmapped_posture_keys: fromPosture.unmappedKeys,
        unmatched_statements: fromStatements.unmatchedStatements,
        matching_rules: {
          vocabulary_version: data.vocabulary.version,
          description:
            "Posture keys are flattened with '_' and normalized; each must equal a key of a posture fact (src/conformance/data/posture-facts.yaml). " +
            "Statements are matched by the facts' phrases per clause; a negation in the clause denies, a planning word makes it partial. " +
            "A control is met when every fact it requires is affirmed, partially met when some are affirmed or partial, not addressed otherwise.",
        },
        checked_at: ctx.now.toISOString(),
      };
    },
  };
}

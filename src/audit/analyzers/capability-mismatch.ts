import { CAPABILITIES, declaredCapabilities, observedCapabilities, type Capability } from "../capability-profile.js";
import type { Auditor, Hit, RuleDef, Severity } from "../finding.js";
import { isCode } from "../source-file.js";

// Auditor 13, declared-vs-observed capabilities: what the declaration (`declared_capabilities`) claims
// against what the supplied code does. Observed capabilities: network, shell, filesystem_write,
// filesystem_read, payments, email, database, llm, browser (recognisers in src/audit/capability-profile.ts);
// declared entries are read through a shipped vocabulary (e.g. "web-search" claims network, "code-execution"
// claims shell). It runs only when code was examined.
//
// Rules:
// - capability.undeclared (high for shell and payments; medium for network, filesystem_write, email,
//   database, browser; low for filesystem_read and llm): the code exercises a capability the declaration
//   does not claim; the finding points at the first place it is exercised.
// - capability.declared-not-observed (info): a claimed capability no supplied code exercises (the audit
//   only sees what was supplied: not a defect, but the declaration and the code disagree).

const UNDECLARED_SEVERITY: Record<Capability, Severity> = {
  shell: "high",
  payments: "high",
  network: "medium",
  filesystem_write: "medium",
  email: "medium",
  database: "medium",
  browser: "medium",
  filesystem_read: "low",
  llm: "low",
};

const RULES: RuleDef[] = [
  { id: "capability.undeclared", severity: "medium", title: "Capability used but not declared", detects: "code exercising network, shell, file writes or reads, payments, email, database, model or browser access the declaration does not claim (high for shell and payments, low for reads and model calls)", recommendation: "Declare every capability the agent exercises, or remove the code that exercises it." },
  { id: "capability.declared-not-observed", severity: "info", title: "Capability declared but not seen in the supplied code", detects: "a declared capability with no supporting code among the supplied artifacts", recommendation: "Supply the code that implements it, or narrow the declaration." },
];

export const capabilityMismatchAuditor: Auditor = {
  id: "capability-mismatch",
  name: "Declared-vs-observed capability mismatch",
  summary: "capabilities the code exercises but the declaration omits, and declared ones no supplied code exercises",
  rules: RULES,
  analyze(view) {
    if (!view.files.some(isCode)) return [];
    const observed = observedCapabilities(view.files);
    const declared = declaredCapabilities(view.declaredCapabilities);
    const hits: Hit[] = [];
    for (const c of CAPABILITIES) {
      const seen = observed.get(c);
      // Reading files is implied by writing them.
      const claimed = declared.has(c) || (c === "filesystem_read" && declared.has("filesystem_write"));
      if (seen && !claimed) {
        hits.push({ rule: "capability.undeclared", file: seen.file, line: seen.line, evidence: `${c} exercised but not declared: ${seen.evidence}`, severity: UNDECLARED_SEVERITY[c] });
      }
    }
    const explained = new Set<string>();
    for (const [c, entries] of declared) if (observed.has(c)) for (const e of entries) explained.add(e);
    for (const [c, entries] of declared) {
      for (const e of entries) {
        if (observed.has(c) || explained.has(e)) continue;
        explained.add(e);
        hits.push({ rule: "capability.declared-not-observed", evidence: `declared "${e}" (${c}) but no supplied code exercises it` });
      }
    }
    return hits;
  },
};

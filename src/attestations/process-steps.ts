import { createHash } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { canonicalJson } from "../platform/canonical-json.js";

// Checking a process run against its declared steps: each declared step must be reported done, with an
// evidence hash, and (for an ordered process) completed no earlier than the step declared before it.
// The reported steps are committed as a Merkle tree, so one step's evidence can later be shown alone.

export const STEPS_MERKLE_TREE =
  "OpenZeppelin SimpleMerkleTree: one leaf per reported step, in the order given, = SHA-256 of the RFC 8785 canonical JSON of {step, status, completed_at, evidence_sha256}; pairs hashed sorted with keccak256";

export type ReportedStep = { step: string; status: "done" | "skipped"; completed_at: string; evidence_sha256: string | null };

export type StepFinding = {
  step: string;
  present: boolean;
  status: string | null;
  completed_at: string | null;
  evidence_sha256: string | null;
  in_order: boolean | null;
  ok: boolean;
  problems: string[];
};

export function stepLeaf(s: ReportedStep): string {
  return `0x${createHash("sha256").update(canonicalJson(s), "utf8").digest("hex")}`;
}

export function checkProcess(declared: string[], ordered: boolean, reported: ReportedStep[]) {
  const byName = new Map<string, ReportedStep>();
  const duplicates = new Set<string>();
  for (const s of reported) {
    if (byName.has(s.step)) duplicates.add(s.step);
    else byName.set(s.step, s);
  }
  let previous: { step: string; at: number } | undefined;
  const findings: StepFinding[] = declared.map((name) => {
    const s = byName.get(name);
    if (!s) return { step: name, present: false, status: null, completed_at: null, evidence_sha256: null, in_order: null, ok: false, problems: ["not reported"] };
    const problems: string[] = [];
    if (s.status !== "done") problems.push(`reported ${s.status}`);
    if (!s.evidence_sha256) problems.push("no evidence hash");
    if (duplicates.has(name)) problems.push("reported more than once");
    const at = Date.parse(s.completed_at);
    let inOrder: boolean | null = null;
    if (ordered) {
      inOrder = !previous || at >= previous.at;
      if (!inOrder) problems.push(`completed before the preceding step ${previous!.step}`);
      previous = { step: name, at };
    }
    return { step: name, present: true, status: s.status, completed_at: s.completed_at, evidence_sha256: s.evidence_sha256, in_order: inOrder, ok: problems.length === 0, problems };
  });
  const declaredSet = new Set(declared);
  const leaves = reported.map(stepLeaf);
  return {
    findings,
    extra_steps: [...new Set(reported.map((s) => s.step).filter((s) => !declaredSet.has(s)))],
    duplicate_steps: [...duplicates],
    process_followed: findings.every((f) => f.ok),
    leaves,
    steps_merkle_root: SimpleMerkleTree.of(leaves).root,
  };
}

import { expect } from "chai";
import { asiChecks } from "../../../src/audit/asi-checks.js";
import { ASI_CATEGORIES, categoryRules } from "../../../src/audit/asi-categories.js";
import { AuditSubjectInput } from "../../../src/audit/audit-subject.js";
import { auditFindings, AUDITORS, MAX_FINDINGS_PER_RULE, runAuditors } from "../../../src/audit/auditors.js";
import type { Auditor } from "../../../src/audit/finding.js";
import { auditBody, AUDITED_FIXTURES, loadFixtureRepo } from "../../fixtures/audit-repos.js";

// Each auditor against the fixture repository where its issue is planted (it finds exactly what was
// planted, at the right file and line) and against the clean repository (it finds nothing).

const parse = (name: string) => AuditSubjectInput.parse(auditBody(name, loadFixtureRepo(name)));
const found = (name: string, auditors: readonly Auditor[]) => runAuditors(parse(name), auditors).map((f) => [f.rule, f.file, f.line] as const);

const PLANTED: Record<(typeof AUDITED_FIXTURES)[number], [rule: string, file: string | null, line: number | null][]> = {
  secrets: [
    ["secrets.cloud-credential", ".env", 2],
    ["secrets.private-key", "deploy.pem", 1],
    ["secrets.cloud-credential", "config.js", 4],
    ["secrets.cloud-credential", "config.js", 5],
    ["secrets.cloud-credential", "config.js", 6],
    ["secrets.connection-string", "config.js", 7],
  ],
  "prompt-injection": [["prompt-injection.system-interpolation", "agent.js", 9]],
  "tool-permissions": [
    ["permissions.wildcard-scope", "agent.json", 6],
    ["permissions.shell-tool", "agent.json", 9],
  ],
  "network-egress": [
    ["egress.tls-verification-disabled", "preview.js", 5],
    ["egress.user-supplied-url", "preview.js", 9],
  ],
  dependencies: [
    ["deps.known-bad-package", "package.json", 9],
    ["deps.known-bad-package", "requirements.txt", 2],
    ["deps.install-script", "package.json", 5],
    ["deps.unpinned-version", "package.json", 10],
    ["deps.unpinned-version", "requirements.txt", 3],
  ],
  "endpoint-auth": [
    ["auth.unauthenticated-mutation", "routes.js", 10],
    ["auth.unauthenticated-sensitive-route", "routes.js", 11],
  ],
  "sensitive-logging": [["logging.credentials", "login.js", 3]],
  "unsafe-eval": [
    ["eval.model-output-executed", "calc.js", 8],
    ["eval.unsafe-deserialization", "restore.py", 6],
  ],
  injection: [
    ["injection.sql-string-built", "repo.js", 7],
    ["injection.command-built", "repo.js", 13],
  ],
  "weak-crypto": [
    ["crypto.weak-password-hash", "accounts.js", 5],
    ["crypto.insecure-random", "accounts.js", 10],
  ],
  "pii-retention": [
    ["pii.card-security-code-stored", "schema.sql", 5],
    ["pii.sensitive-fields-stored", "schema.sql", 4],
    ["pii.transcripts-kept", "transcripts.js", 5],
  ],
  "resource-bounds": [
    ["bounds.no-rate-limit", "loop.js", 6],
    ["bounds.unbounded-agent-loop", "loop.js", 11],
  ],
  "capability-mismatch": [
    ["capability.undeclared", "summarize.js", 1],
    ["capability.declared-not-observed", null, null],
    ["capability.declared-not-observed", null, null],
  ],
};

describe("audit auditors: each finds its planted issue and nothing on the clean repository", () => {
  it("there are thirteen auditors, one fixture repository each, with distinct rule ids", () => {
    expect(AUDITORS).to.have.length(13);
    expect(AUDITED_FIXTURES).to.have.length(13);
    const ids = [...AUDITORS, asiChecks].flatMap((a) => a.rules.map((r) => r.id));
    expect(new Set(ids).size).to.equal(ids.length);
  });

  AUDITORS.forEach((auditor, i) => {
    const fixture = AUDITED_FIXTURES[i]!;
    it(`${auditor.id}: finds exactly the issues planted in audit-repos/${fixture}, and nothing in audit-repos/clean`, () => {
      expect(found(fixture, [auditor])).to.have.deep.members(PLANTED[fixture]);
      expect(found("clean", [auditor])).to.deep.equal([]);
    });
  });

  it("the clean repository has no finding from any auditor or category check", () => {
    expect(runAuditors(parse("clean"), [...AUDITORS, asiChecks])).to.deep.equal([]);
  });

  it("the category checks find each issue planted in audit-repos/asi, and every category has a finding there", () => {
    const findings = runAuditors(parse("asi"), [...AUDITORS, asiChecks]);
    const rules = findings.map((f) => [f.rule, f.file, f.line]);
    expect(rules).to.deep.include.members([
      ["asi01.embedded-instructions", "NOTES.md", 3],
      ["asi02.destructive-tool-unconfirmed", "agent.json", 5],
      ["asi03.credential-passthrough", "crm.js", 21],
      ["asi04.runtime-fetched-tool", "mcp.json", 3],
      ["eval.dynamic-code", "crm.js", 29],
      ["asi06.untrusted-memory-write", "crm.js", 15],
      ["egress.plaintext-transport", "crm.js", 9],
      ["asi08.unbounded-fan-out", "crm.js", 23],
      ["asi09.approval-disabled", "config.yaml", 3],
      ["asi10.self-modification", "crm.js", 36],
      ["asi10.audit-trail-disabled", "memory.js", 4],
    ]);
    // A route guarded by a token middleware is not reported unauthenticated.
    expect(findings.filter((f) => f.rule.startsWith("auth."))).to.deep.equal([]);
    for (const c of ASI_CATEGORIES) expect(findings.some((f) => f.asi.includes(c.id)), c.id).to.equal(true);
    // The embedded instruction is reported by rule, never quoted.
    expect(findings.find((f) => f.rule === "asi01.embedded-instructions")!.evidence).to.not.match(/ignore all previous/i);
  });

  it("the ASI data names ten categories ASI01 to ASI10, and every rule they list exists", () => {
    expect(ASI_CATEGORIES.map((c) => c.id)).to.deep.equal(["ASI01", "ASI02", "ASI03", "ASI04", "ASI05", "ASI06", "ASI07", "ASI08", "ASI09", "ASI10"]);
    expect(ASI_CATEGORIES.map((c) => c.name)).to.include.members(["Agent Goal Hijack", "Tool Misuse and Exploitation", "Rogue Agents"]);
    const known = new Set([...AUDITORS, asiChecks].flatMap((a) => a.rules.map((r) => r.id)));
    for (const c of ASI_CATEGORIES) for (const r of categoryRules(c)) expect(known.has(r), `${c.id} lists ${r}`).to.equal(true);
    // Every rule of the thirteen auditors falls under at least one category.
    const listed = new Set(ASI_CATEGORIES.flatMap((c) => c.rules));
    for (const a of AUDITORS) for (const r of a.rules) expect(listed.has(r.id), r.id).to.equal(true);
  });

  it("findings carry the file's basename and SHA-256, and are ordered by severity and numbered", () => {
    const input = parse("dependencies");
    const findings = runAuditors(input, AUDITORS);
    expect(findings.map((f) => f.id)).to.deep.equal(findings.map((_, i) => `F-${String(i + 1).padStart(3, "0")}`));
    expect(findings[0]!.severity).to.equal("critical");
    const pkg = input.files.find((f) => f.name === "package.json")!;
    expect(findings.find((f) => f.file === "package.json")!.file_sha256).to.equal(pkg.sha256);
  });

  it("a rule lists at most 25 findings; further occurrences are counted, not listed", () => {
    const input = AuditSubjectInput.parse({ subject: { agent_id: "a", artifacts: { "many.ts": "eval(x);\n".repeat(40) } } });
    const { findings, suppressed } = auditFindings(input, AUDITORS);
    expect(findings.filter((f) => f.rule === "eval.dynamic-code")).to.have.length(MAX_FINDINGS_PER_RULE);
    expect(suppressed).to.deep.equal({ "eval.dynamic-code": 40 - MAX_FINDINGS_PER_RULE });
  });
});

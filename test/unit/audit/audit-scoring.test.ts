import { expect } from "chai";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { AuditSubjectInput, type AuditInput } from "../../../src/audit/audit-subject.js";
import { commitItems, leafOf } from "../../../src/audit/findings-merkle.js";
import type { Finding } from "../../../src/audit/finding.js";
import { llmReview } from "../../../src/audit/llm-review.js";
import { auditScore } from "../../../src/audit/score.js";
import type { LlmEngine, StructuredRequest } from "../../../src/llm/llm-engine.js";
import { auditBody, loadFixtureRepo } from "../../fixtures/audit-repos.js";

// The 0-10 score formula, the Merkle commitment of findings, and the optional LLM reviewer (labelled,
// never counted, never required, and never shown a secret).

const finding = (rule: string, severity: Finding["severity"], n = 1): Finding[] =>
  Array.from({ length: n }, (_, i) => ({ id: `F-${i}`, auditor: "a", rule, severity, title: "t", file: "a.ts", file_sha256: null, line: i + 1, evidence: "e", recommendation: "r", basis: "static" as const, asi: [] }));

describe("audit score", () => {
  it("deducts 3 / 1.5 / 0.5 / 0.1 per critical / high / medium / low finding, exactly, floored at 0", () => {
    expect(auditScore([], "observed_artifacts")).to.include({ value: 10, deducted: 0, basis: "observed_artifacts" });
    const s = auditScore([...finding("a", "critical"), ...finding("b", "high"), ...finding("c", "medium"), ...finding("d", "low"), ...finding("e", "info")], "observed_artifacts");
    expect(s).to.include({ value: 4.9, deducted: 5.1 });
    expect(s.counted).to.deep.equal({ critical: 1, high: 1, medium: 1, low: 1, info: 1 });
    expect(auditScore(finding("a", "critical", 2).concat(finding("b", "critical", 2)), "observed_artifacts").value).to.equal(0);
  });

  it("counts a rule at most three times", () => {
    expect(auditScore(finding("same", "medium", 10), "observed_artifacts")).to.include({ value: 8.5, deducted: 1.5 });
  });

  it("says when its basis is the declaration only", () => {
    const s = auditScore(finding("permissions.declared-wildcard", "high"), "self_declared");
    expect(s).to.include({ value: 8.5, basis: "declaration_only" });
    expect(s.basis_note).to.match(/no code was examined/);
  });
});

describe("findings Merkle commitment", () => {
  it("every item's leaf is the SHA-256 of its canonical JSON and its proof verifies against the root", () => {
    const items = [{ category: "ASI01", status: "covered", finding_ids: [] }, ...finding("x", "high", 3)];
    const { root, proofs } = commitItems(items);
    proofs.forEach((p, i) => {
      expect(p.leaf).to.equal(leafOf(items[i]));
      expect(SimpleMerkleTree.verify(root, p.leaf, p.proof)).to.equal(true);
    });
    expect(SimpleMerkleTree.verify(root, leafOf({ ...items[1]!, severity: "low" }), proofs[1]!.proof)).to.equal(false);
  });
});

describe("LLM reviewer", () => {
  const input = (name: string) => AuditSubjectInput.parse(auditBody(name, loadFixtureRepo(name))) as AuditInput;

  it("without a model the report says so and stands on the static auditors", async () => {
    const r = await llmReview(undefined, input("clean").files, "pay_1");
    expect(r).to.include({ status: "not_configured", model: null });
    expect(r.findings).to.deep.equal([]);
  });

  it("with a model: findings are labelled, limited to supplied files, and the model never sees a secret", async () => {
    const repo = loadFixtureRepo("secrets");
    const files = (AuditSubjectInput.parse(auditBody("secrets", repo)) as AuditInput).files;
    let seen: StructuredRequest<unknown> | undefined;
    const llm: LlmEngine = {
      modelFor: () => "test-model",
      complete: async <T>(req: StructuredRequest<T>) => {
        seen = req as StructuredRequest<unknown>;
        const value = req.schema.parse({
          findings: [
            { file: "config.js", line: 4, severity: "high", title: "Credentials in config", rationale: "the config module embeds cloud credentials", asi: "ASI03" },
            { file: "elsewhere.ts", line: 1, severity: "critical", title: "Invented", rationale: "a file that was never supplied", asi: null },
          ],
        });
        return { value, model: "test-model-2026", usage: { promptTokens: 10, completionTokens: 5, costMicroUsd: 1n }, repaired: false };
      },
    };
    const r = await llmReview(llm, files, "pay_1");
    expect(r).to.include({ status: "completed", model: "test-model-2026" });
    expect(r.findings).to.have.length(1);
    expect(r.findings[0]).to.include({ id: "L-001", origin: "llm_review", file: "config.js", severity: "high" });
    expect(r.note).to.match(/AI-generated/);
    expect(seen!.family).to.equal("security");
    expect(seen!.accountTo).to.equal("pay_1");
    const prompt = seen!.messages.map((m) => m.content).join("\n");
    expect(prompt).to.contain("[REDACTED-SECRET]");
    for (const s of repo.secrets) expect(prompt).to.not.contain(s);
  });

  it("a failing model is reported, not fatal", async () => {
    const llm: LlmEngine = { modelFor: () => "m", complete: async () => Promise.reject(new Error("429 rate limited")) };
    const r = await llmReview(llm, input("clean").files, "pay_1");
    expect(r).to.include({ status: "failed", model: "m" });
    expect(r.note).to.match(/429 rate limited/);
  });
});

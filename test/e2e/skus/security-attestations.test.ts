import { expect } from "chai";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { AuditAttestationOutput } from "../../../src/skus/security-audit-attestation.js";
import { ProcessAttestationOutput } from "../../../src/skus/security-process-attestation.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { registerAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { anchoredProof, runSvcVerify } from "../../fixtures/audit-e2e.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("security.audit-attestation and security.process-attestation: signed statements on the proof rail, checked by svc verify", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let buyer: Buyer;
  let dir: string;
  before(async () => {
    srv = await startTestServer({ ANCHOR_BATCH_SIZE: "1000", ANCHOR_MAX_WAIT_SECONDS: "0", ANCHOR_POLL_MS: "100" });
    buyer = await newBuyer(srv);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-attest-"));
  });
  after(async () => {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const pay = async (sku: string, body: unknown) => {
    const res = await wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)))(`${srv.url}/v1/services/${sku}`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const anchored = (proofId: string) => anchoredProof(srv, proofId);
  const verify = (target: string) => runSvcVerify(srv, target);
  const expectVerified = async (proofId: string) => {
    const r = await verify(proofId);
    expect(r.code, r.out).to.equal(0);
    for (const check of ["hash", "signature", "inclusion", "anchor"]) expect(r.out).to.match(new RegExp(`PASS\\s+${check}`));
  };

  it("audit attestation: claims checked against the report, recorded as kind 30110, verified by svc verify (and a tampered copy is caught)", async () => {
    const subject = await registerAgent(srv);
    const deliverable = "contract Vault { function withdraw() external { /* … */ } }";
    const report = { auditor: "Trail of Bits", deliverable_sha256: sha256(deliverable), result: "pass_with_findings", performed_at: "2026-09-20T10:00:00Z", scope: "Vault.sol", findings: [{ severity: "high", title: "reentrancy" }, { severity: "low", title: "naming" }] };
    const before = await usdcBalance(srv, buyer.address);
    const res = await pay("security.audit-attestation", {
      subject: subject.name,
      auditor: "Trail of Bits",
      deliverable,
      audit: { scope: "Vault.sol", performed_at: "2026-09-20T10:00:00.000Z", result: "pass_with_findings", findings: { high: 1, low: 1 } },
      report,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 500_000n);
    const d = res.body.deliverable;
    expect(AuditAttestationOutput.safeParse(d).error).to.equal(undefined);
    expect(d.statement).to.include({ attestation_type: "audit", subject: subject.name, subject_agent_id: subject.agent_id, deliverable_sha256: sha256(deliverable), evidence_class: "observed_report", claims_match: true, payer: buyer.address });
    expect(d.statement.report_sha256).to.equal(sha256(canonicalJson(report)));
    expect(d.statement.claims.map((c: Json) => [c.claim, c.matches])).to.deep.include.members([["deliverable_sha256", true], ["auditor", true], ["result", true], ["performed_at", true], ["findings.high", true], ["findings.low", true]]);
    expect(d.proof).to.include({ kind: 30110, task_class: "security", settlement_ref: d.attestation_id, url: `/v1/proofs/${d.proof.proof_id}`, verify: `svc verify ${d.proof.proof_id}` });

    const proof = await anchored(d.proof.proof_id);
    expect(proof.body).to.deep.equal(d.statement);
    expect(proof.record_sha256).to.equal(d.proof.record_sha256);
    await expectVerified(d.proof.proof_id);
    const file = path.join(dir, "audit-tampered.json");
    fs.writeFileSync(file, JSON.stringify({ proof: { ...proof, body: { ...proof.body, claims_match: false } } }));
    const tampered = await verify(file);
    expect(tampered.code).to.equal(1);
    expect(tampered.out).to.match(/FAIL\s+hash/);

    // The trust layer counts the attestation about the registered subject.
    const trust = await pay("procurement.trust-layer", { subject: subject.name });
    expect(trust.body.deliverable.security_attestations).to.include({ count: 1 });
    await expectLedgerConsistent(srv.ds);
  });

  it("audit attestation: a report contradicting the claims is notarized as not matching; a hash-only report is notarized as declared", async () => {
    const claims = { subject: "billing-service", auditor: "Acme Audits", deliverable_sha256: "ab".repeat(32), audit: { scope: "billing", performed_at: "2026-09-01T00:00:00Z", result: "pass", findings: { critical: 0 } } };
    const contradicted = (await pay("security.audit-attestation", { ...claims, report: JSON.stringify({ result: "fail", auditor: "Acme Audits", findings: { critical: 2 } }) })).body.deliverable.statement;
    expect(contradicted).to.include({ claims_match: false, evidence_class: "observed_report", subject_agent_id: null });
    expect(contradicted.claims.find((c: Json) => c.claim === "result")).to.include({ reported: "fail", matches: false });
    expect(contradicted.claims.find((c: Json) => c.claim === "findings.critical")).to.include({ reported: "2", matches: false });
    const declared = (await pay("security.audit-attestation", { ...claims, report_sha256: "cd".repeat(32) })).body.deliverable.statement;
    expect(declared).to.include({ evidence_class: "declared_report_hash", claims_match: null, report_sha256: "cd".repeat(32) });
  });

  it("process attestation: declared steps against reported ones, Merkle-committed, verified by svc verify", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const steps = [
      { step: "threat-model", completed_at: "2026-09-01T09:00:00Z", evidence: "threat model v3" },
      { step: "code-review", completed_at: "2026-09-02T09:00:00Z", evidence_sha256: "11".repeat(32) },
      { step: "pen-test", completed_at: "2026-09-03T09:00:00Z", evidence_sha256: "22".repeat(32) },
      { step: "sign-off", completed_at: "2026-09-04T09:00:00Z", evidence_sha256: "33".repeat(32) },
    ];
    const res = await pay("security.process-attestation", { process: { name: "secure release", version: "2", steps: ["threat-model", "code-review", "pen-test", "sign-off"] }, actor: "release-bot", steps });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 250_000n);
    expect(ProcessAttestationOutput.safeParse(res.body.deliverable).error).to.equal(undefined);
    const st = res.body.deliverable.statement;
    expect(st).to.include({ attestation_type: "process", process_followed: true, actor: "release-bot", actor_agent_id: null });
    expect(st.reported_steps[0].evidence_sha256).to.equal(sha256("threat model v3"));
    expect(st.findings.every((f: Json) => f.ok)).to.equal(true);
    // Each step can be shown alone: its leaf is in the committed root.
    const leaf = st.reported_steps[2];
    expect(`0x${createHash("sha256").update(canonicalJson({ step: leaf.step, status: leaf.status, completed_at: leaf.completed_at, evidence_sha256: leaf.evidence_sha256 })).digest("hex")}`).to.equal(leaf.leaf);
    const tree = SimpleMerkleTree.of(st.reported_steps.map((s: Json) => s.leaf));
    expect(tree.root).to.equal(st.steps_merkle_root);
    expect(SimpleMerkleTree.verify(st.steps_merkle_root, leaf.leaf, tree.getProof(2))).to.equal(true);
    await anchored(res.body.deliverable.proof.proof_id);
    await expectVerified(res.body.deliverable.proof.proof_id);
  });

  it("process attestation: missing, unevidenced, skipped and out-of-order steps mean the process was not followed", async () => {
    const st = (
      await pay("security.process-attestation", {
        process: { name: "deploy", steps: ["build", "test", "approve", "deploy"] },
        actor: "ops",
        steps: [
          { step: "build", completed_at: "2026-09-01T10:00:00Z", evidence_sha256: "aa".repeat(32) },
          { step: "test", completed_at: "2026-09-01T09:00:00Z", evidence_sha256: "bb".repeat(32) },
          { step: "approve", status: "skipped", completed_at: "2026-09-01T11:00:00Z" },
          { step: "hotfix", completed_at: "2026-09-01T12:00:00Z", evidence_sha256: "cc".repeat(32) },
        ],
      })
    ).body.deliverable.statement;
    expect(st.process_followed).to.equal(false);
    const problems = Object.fromEntries(st.findings.map((f: Json) => [f.step, f.problems]));
    expect(problems.build).to.deep.equal([]);
    expect(problems.test[0]).to.contain("completed before the preceding step build");
    expect(problems.approve).to.deep.equal(["reported skipped", "no evidence hash"]);
    expect(problems.deploy).to.deep.equal(["not reported"]);
    expect(st.extra_steps).to.deep.equal(["hotfix"]);
  });

  it("refuses bad input with 400 naming the field, before any challenge, charging nothing", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const audit = { scope: "x", performed_at: "2026-09-01T00:00:00Z", result: "pass" };
    const cases: [string, unknown, string][] = [
      ["security.audit-attestation", { auditor: "a", deliverable_sha256: "ab".repeat(32), audit }, "subject"],
      ["security.audit-attestation", { subject: "s", auditor: "a", audit }, "deliverable_sha256"],
      ["security.audit-attestation", { subject: "s", auditor: "a", deliverable_sha256: "XYZ", audit }, "deliverable_sha256"],
      ["security.audit-attestation", { subject: "s", auditor: "a", deliverable_sha256: "ab".repeat(32), audit: { ...audit, result: "great" } }, "audit.result"],
      ["security.audit-attestation", { subject: "s", auditor: "a", deliverable_sha256: "ab".repeat(32), audit: { ...audit, performed_at: "2999-01-01T00:00:00Z" } }, "audit.performed_at"],
      ["security.process-attestation", { process: { name: "p", steps: [] }, actor: "a", steps: [{ step: "x", completed_at: "2026-09-01T00:00:00Z" }] }, "process.steps"],
      ["security.process-attestation", { process: { name: "p", steps: ["x", "x"] }, actor: "a", steps: [{ step: "x", completed_at: "2026-09-01T00:00:00Z" }] }, "process.steps"],
      ["security.process-attestation", { process: { name: "p", steps: ["x"] }, actor: "a", steps: [{ step: "x", completed_at: "soon" }] }, "steps.0.completed_at"],
      ["security.process-attestation", { process: { name: "p", steps: ["x"] }, actor: "a", steps: [{ step: "x", completed_at: "2026-09-01T00:00:00Z", evidence: "e", evidence_sha256: "ab".repeat(32) }] }, "steps.0.evidence_sha256"],
    ];
    for (const [sku, body, field] of cases) {
      const res = await fetch(`${srv.url}/v1/services/${sku}`, { method: "POST", headers: json, body: JSON.stringify(body) });
      expect(res.status, `${sku} ${field}`).to.equal(400);
      expect(res.headers.get("payment-required")).to.equal(null);
      expect(JSON.stringify(await res.json()), field).to.contain(field);
    }
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });
});

import { expect } from "chai";
import { createHash } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { MultiAgentAuditOutput } from "../../../src/skus/security-multi-agent-audit.js";
import { registerAgent } from "../../fixtures/agents.js";
import { anchoredProof, expectVerifiedByCli } from "../../fixtures/audit-e2e.js";
import { auditBody, loadFixtureRepo } from "../../fixtures/audit-repos.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { payingFetchUpTo } from "../../fixtures/large-payments.js";
import { pollResult } from "../../fixtures/results.js";
import { answerOf, callPaid, callUnpaid, expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";

const SKU = "security.multi-agent-audit";
const PRICE = 5_000_000n;
const ASI = ["ASI01", "ASI02", "ASI03", "ASI04", "ASI05", "ASI06", "ASI07", "ASI08", "ASI09", "ASI10"];
const leaf = (item: unknown) => `0x${createHash("sha256").update(canonicalJson(item), "utf8").digest("hex")}`;

describe("security.multi-agent-audit: ASI01 to ASI10 coverage, Merkle-committed findings, a signed 30105 report (async)", function () {
  this.timeout(180_000);
  let srv: TestServer;
  let buyer: Buyer;
  before(async () => {
    // No language model configured: the audit does not need one.
    srv = await startTestServer({ ANCHOR_BATCH_SIZE: "1000", ANCHOR_MAX_WAIT_SECONDS: "0", ANCHOR_POLL_MS: "100" });
    buyer = await newBuyer(srv, 100);
  });
  after(() => srv.close());

  const order = async (body: unknown) => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await answerOf(await payingFetchUpTo(buyer, 5)(`${srv.url}/v1/services/${SKU}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const done = await pollResult(srv, res.body.job_id);
    expect(done.status, JSON.stringify(done)).to.equal("delivered");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - PRICE);
    expect(MultiAgentAuditOutput.safeParse(done.deliverable).error).to.equal(undefined);
    return done.deliverable as Json;
  };

  it("reports every category with its findings, each finding provable against the signed Merkle root; svc verify passes", async () => {
    const agent = await registerAgent(srv);
    const repo = loadFixtureRepo("asi");
    const d = await order({ ...auditBody("asi", repo), target: agent.name, subject: { agent_id: agent.agent_id, declared_capabilities: repo.declared, artifacts: repo.artifacts } });
    expect(d.report).to.include({ report_type: "multi_agent_audit", sku_id: SKU, target: agent.name, agent_id: agent.agent_id, evidence_class: "observed_artifacts" });
    expect(d.report.framework.name).to.match(/OWASP Top 10 for Agentic Applications/);

    // Ten categories, named, each with findings in this repository (one issue planted per category).
    expect(d.details.categories.map((c: Json) => c.id)).to.deep.equal(ASI);
    expect(d.details.categories.find((c: Json) => c.id === "ASI01").name).to.equal("Agent Goal Hijack");
    for (const c of d.details.categories) {
      expect(c.status, c.id).to.equal("findings");
      for (const id of c.finding_ids) expect(d.details.findings.find((f: Json) => f.id === id).asi).to.include(c.id);
    }
    expect(d.report.categories.map((c: Json) => [c.id, c.status])).to.deep.equal(ASI.map((id) => [id, "findings"]));
    expect(d.details.llm_review).to.include({ status: "not_configured" });

    // Merkle: each category result and each finding is a leaf; every proof verifies against the root in the signed report.
    const root = d.report.findings_merkle_root;
    expect(root).to.equal(d.details.merkle.root);
    expect(d.report.merkle_leaves).to.equal(ASI.length + d.details.findings.length);
    for (const f of d.details.findings) {
      const { leaf: l, proof, ...finding } = f;
      expect(l).to.equal(leaf(finding));
      expect(SimpleMerkleTree.verify(root, l, proof), f.id).to.equal(true);
    }
    for (const c of d.details.categories) {
      expect(c.leaf).to.equal(leaf({ category: c.id, name: c.name, status: c.status, finding_ids: c.finding_ids }));
      expect(SimpleMerkleTree.verify(root, c.leaf, c.proof)).to.equal(true);
    }
    // A finding altered after the fact no longer proves against the root.
    const { leaf: l0, proof: p0, ...first } = d.details.findings[0];
    expect(SimpleMerkleTree.verify(root, leaf({ ...first, severity: "info" }), p0)).to.equal(false);
    expect(l0).to.be.a("string");
    expect(d.report.report_sha256).to.equal(createHash("sha256").update(canonicalJson(d.details)).digest("hex"));

    // The signed report is the 30105 record's body, anchored and verified by the CLI; the trust layer counts it.
    expect(d.proof).to.include({ kind: 30105, task_class: "security", settlement_ref: d.report_id });
    const proof = await anchoredProof(srv, d.proof.proof_id);
    expect(proof.body).to.deep.equal(d.report);
    await expectVerifiedByCli(srv, d.proof.proof_id);
    const trust = await callPaid(srv, buyer, "procurement.trust-layer", { subject: agent.agent_id });
    expect(trust.body.deliverable.audit_reports).to.include({ count: 1 });
    await expectLedgerConsistent(srv.ds);
  });

  it("a clean repository: categories covered or not applicable (with the reason), no findings, score 10", async () => {
    const d = await order(auditBody("clean", loadFixtureRepo("clean")));
    expect(d.details.findings).to.deep.equal([]);
    const status = Object.fromEntries(d.details.categories.map((c: Json) => [c.id, c.status]));
    expect(status).to.deep.equal({ ASI01: "covered", ASI02: "covered", ASI03: "covered", ASI04: "covered", ASI05: "covered", ASI06: "not_applicable", ASI07: "covered", ASI08: "covered", ASI09: "not_applicable", ASI10: "covered" });
    expect(d.details.categories.find((c: Json) => c.id === "ASI06").reason).to.match(/persists nothing/);
    expect(d.report.score).to.deep.equal({ value: 10, max: 10, basis: "observed_artifacts" });
    for (const c of d.details.categories) expect(SimpleMerkleTree.verify(d.report.findings_merkle_root, c.leaf, c.proof)).to.equal(true);
  });

  it("self_declared: categories not assessed, except what the declaration itself shows", async () => {
    const d = await order({ target: "ops-bot", evidence_class: "self_declared", subject: { agent_id: "agent_opsbot000001", declared_capabilities: ["admin", "shell"] } });
    const status = Object.fromEntries(d.details.categories.map((c: Json) => [c.id, c.status]));
    expect(status.ASI02).to.equal("findings");
    expect(status.ASI05).to.equal("not_assessed");
    expect(d.details.categories.find((c: Json) => c.id === "ASI05").reason).to.match(/no code was examined \(self_declared\)/);
    expect(d.details.evidence.code_findings_possible).to.equal(false);
    expect(d.details.score.basis).to.equal("declaration_only");
  });

  it("a bare name is insufficient_subject, local_disk is refused and bad input is a 400: nothing charged", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const bare = await callUnpaid(srv, SKU, { target: "agent-x" });
    expect(bare.body).to.include({ status: "insufficient_subject", charged: false });
    expect(bare.challenged).to.equal(false);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
    await expectFailuresUncharged({ srv, buyer }, SKU, [[{ target: "agent-x", evidence_class: "local_disk", subject: { agent_id: "agent_x" } }, 409, "evidence_class_unavailable"]]);
    await expectBadInputRefused({ srv, buyer }, SKU, [
      [{}, "target"],
      [{ target: "x", evidence_class: "notarized_manifest", subject: { agent_id: "a" } }, "subject.artifacts"],
    ]);
  });
});

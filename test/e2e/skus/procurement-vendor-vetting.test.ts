import { expect } from "chai";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { VendorVettingOutput } from "../../../src/skus/procurement-vendor-vetting.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectRefundedAfterRepair, llmJobSuite } from "../../fixtures/llm-jobs.js";
import { TEST_LLM_MODEL } from "../../fixtures/llm-server.js";
import { pollResult } from "../../fixtures/results.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";

const SKU = "procurement.vendor-vetting";
const PRICE = 99_000_000n;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

const DETAILS =
  "Acme Hosting Ltd was founded in 2009 and serves 400 customers. Its SOC 2 Type II report expired in March 2024 and has not been renewed. " +
  "In 2023 a misconfigured storage bucket exposed 12,000 customer records. Annual revenue is 8 million EUR; the largest customer accounts for 45% of revenue. " +
  "The standard contract caps liability at one month of fees.";
const CONTINUITY = "Backups are taken daily and restored quarterly in a test. Recovery time objective: 4 hours.";
const REQUEST = {
  vendor: { name: "Acme Hosting Ltd", website: "https://acme-hosting.example", jurisdiction: "Ireland" },
  details: DETAILS,
  documents: [{ title: "Business continuity policy", content: CONTINUITY }],
  engagement: "Hosting our customer billing database.",
};

const finding = (severity: string, title: string, basis: "stated" | "absent", source: string, evidence: string, red_flag = false) => ({ severity, title, detail: `${title}.`, basis, source, evidence, red_flag });
const ANSWER = {
  financial: { information: "supplied", summary: "Revenue is concentrated.", findings: [finding("medium", "Revenue concentration", "stated", "details", "the largest customer accounts for 45% of revenue")] },
  security: {
    information: "supplied",
    summary: "A past exposure and a lapsed attestation.",
    findings: [
      finding("high", "2023 data exposure", "stated", "details", "a misconfigured storage bucket exposed 12,000 customer records"),
      finding("medium", "SOC 2 lapsed", "stated", "details", "SOC 2 Type II report expired in March 2024"),
      finding("critical", "Criminal investigation", "stated", "details", "the vendor is under criminal investigation", true),
    ],
  },
  compliance: { information: "none", summary: "Nothing supplied on regulatory status.", findings: [] },
  operational: { information: "supplied", summary: "Continuity is documented.", findings: [finding("low", "Four-hour recovery objective", "stated", "document:1", "Recovery time objective: 4 hours")] },
  reputational: { information: "none", summary: "No references.", findings: [finding("medium", "No customer references supplied", "absent", "", "")] },
  legal: { information: "supplied", summary: "Low liability cap.", findings: [finding("medium", "Liability capped at one month of fees", "stated", "details", "caps liability at one month of fees", true)] },
  summary: "A capable host with a recent data exposure and a lapsed SOC 2 report.",
};

describe("procurement.vendor-vetting: a vendor risk report over the buyer's own details (async)", function () {
  this.timeout(120_000);
  const { llm, up, pay, usageOf } = llmJobSuite(SKU, { env: { LLM_MAX_RETRIES: "0" }, fundUsd: 400, maxUsd: 99 });

  const order = async (body: unknown) => {
    const res = await pay(body);
    expect(res.status, await res.clone().text()).to.equal(200);
    return ((await res.json()) as Json).job_id as string;
  };

  it("assesses the supplied details for the list price: findings checked against them, the score by formula, disclosure and content hash", async () => {
    const before = await up.balance();
    llm.script({ json: ANSWER });
    const jobId = await order(REQUEST);
    const done = await pollResult(up.srv, jobId);
    expect(done.status, done.error).to.equal("delivered");
    const d = done.deliverable;
    expect(() => VendorVettingOutput.parse(d)).not.to.throw();
    expect(done.powered_by).to.equal(`svc-vetting/llm-findings (${TEST_LLM_MODEL})`);
    expect(await up.balance()).to.equal(before - PRICE);

    // One completion, holding every supplied material and the no-research rule.
    expect(llm.requests).to.have.length(1);
    const prompt = llm.requests[0]!.body.messages.map((m) => m.content).join("\n");
    expect(llm.requests[0]!.schemaName).to.equal("vendor_risk_findings");
    expect(prompt).to.contain(DETAILS).and.to.contain(CONTINUITY).and.to.contain("Hosting our customer billing database.").and.to.contain("[source document:1] Business continuity policy");
    expect(prompt).to.contain("You cannot browse, search or look anything up");

    const byCategory = Object.fromEntries(d.categories.map((c: Json) => [c.category, c]));
    expect(d.categories.map((c: Json) => [c.category, c.score])).to.deep.equal([
      ["financial", 3],
      ["security", 6.8],
      ["compliance", 3],
      ["operational", 1],
      ["reputational", 3],
      ["legal", 3],
    ]);
    // 6.8 + (3 + 3 + 1 + 3 + 3) / 10 = 8.1: computed from severities, the invented critical finding not counted.
    expect(d).to.include({ risk_score: 8.1, risk_level: "critical", ungrounded_findings: 1, engagement: "Hosting our customer billing database.", model: TEST_LLM_MODEL });
    const invented = byCategory.security.findings[2];
    expect(invented).to.include({ id: "F4", grounded: false, counted: false, red_flag: false });
    expect(byCategory.security.findings[0]).to.deep.include({ grounded: true, counted: true, found_in: ["details"] });
    expect(byCategory.operational.findings[0].found_in).to.deep.equal(["document:1"]);
    expect(byCategory.reputational.findings[0]).to.include({ basis: "absent", grounded: null, counted: true });
    expect(d.red_flags.map((r: Json) => [r.finding_id, r.category, r.severity])).to.deep.equal([
      ["F2", "security", "high"],
      ["F7", "legal", "medium"],
    ]);
    expect(d.scoring.severity_points).to.deep.equal({ low: 1, medium: 3, high: 6, critical: 10 });

    expect(d.vendor).to.deep.equal(REQUEST.vendor);
    expect(d.scope.researched_externally).to.equal(false);
    expect(d.scope.statement).to.contain("Nothing was fetched, searched or looked up, the vendor's website included");
    expect(d.scope.materials.map((m: Json) => [m.source, m.chars, m.sha256])).to.deep.equal([
      ["vendor", "name: Acme Hosting Ltd\nwebsite: https://acme-hosting.example\njurisdiction: Ireland".length, sha256("name: Acme Hosting Ltd\nwebsite: https://acme-hosting.example\njurisdiction: Ireland")],
      ["details", DETAILS.length, sha256(DETAILS)],
      ["document:1", CONTINUITY.length, sha256(CONTINUITY)],
      ["engagement", REQUEST.engagement.length, sha256(REQUEST.engagement)],
    ]);
    expect(d.ai_disclosure).to.deep.include({ ai_generated: true, model: TEST_LLM_MODEL });
    const { content_sha256, ...report } = d;
    expect(content_sha256).to.equal(sha256(canonicalJson(report)));

    const usage = await usageOf(jobId);
    expect(usage.map((u) => [u.family, u.ok])).to.deep.equal([["procurement", true]]);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("repairs an answer that leaves out a category", async () => {
    const { legal: _legal, ...missing } = ANSWER;
    llm.script({ json: missing }, { json: ANSWER });
    const done = await pollResult(up.srv, await order(REQUEST));
    expect(done.status, done.error).to.equal("delivered");
    expect(llm.requests.map((r) => r.repair)).to.deep.equal([false, true]);
    expect(llm.requests[1]!.lastUser).to.contain("legal");
    expect(done.deliverable.risk_score).to.equal(8.1);
  });

  it("refunds the job when the answer is still invalid after the repair request", async () => {
    const before = await up.balance();
    llm.respond(() => ({ json: { ...ANSWER, security: { information: "supplied", summary: "x", findings: [finding("severe", "Bad severity", "stated", "details", "x")] } } }));
    await expectRefundedAfterRepair(up, await order(REQUEST), "security.findings.0.severity", before);
    expect(llm.requests.map((r) => r.repair)).to.deep.equal([false, true, false, true, false, true]);
  });

  it("refuses a vendor without details, and other bad input, before any challenge and charges nothing", async () => {
    await expectBadInputRefused(up, SKU, [
      [{ vendor: { name: "Acme Hosting Ltd" } }, "details"],
      [{ vendor: { name: "Acme Hosting Ltd", website: "https://acme-hosting.example" }, engagement: "Hosting" }, "details"],
      [{ details: DETAILS }, "vendor"],
      [{ vendor: "Acme Hosting Ltd", details: DETAILS }, "vendor"],
      [{ vendor: { name: " " }, details: DETAILS }, "vendor.name"],
      [{ vendor: { name: "Acme" }, documents: [] }, "documents"],
      [{ vendor: { name: "Acme" }, documents: [{ title: "Policy" }] }, "documents.0.content"],
      [{ vendor: { name: "Acme" }, details: "x".repeat(50_001) }, "details"],
      [{ vendor: { name: "Acme" }, details: "x", documents: [{ title: "a", content: "y".repeat(100_000) }, { title: "b", content: "z".repeat(100_000) }] }, "documents"],
    ]);
    expect(llm.requests).to.deep.equal([]);
  });
});

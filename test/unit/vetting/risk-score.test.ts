import { expect } from "chai";
import { categoryTenths, levelOf, overallTenths, riskScore } from "../../../src/vetting/risk-score.js";
import { quoteSources } from "../../../src/vetting/grounding.js";
import { assess } from "../../../src/vetting/vendor-assessment.js";
import type { ModelAssessment } from "../../../src/vetting/vetting-prompt.js";
import type { Material } from "../../../src/vetting/vendor-input.js";

const informed = { informed: true };

describe("vendor vetting: the risk score formula (from severities only)", () => {
  it("a category is its highest finding plus a quarter of the rest, half up, capped at 10", () => {
    expect(categoryTenths({ ...informed, severities: [] })).to.equal(0);
    expect(categoryTenths({ informed: false, severities: [] })).to.equal(30); // an unknown is a risk
    expect(categoryTenths({ informed: false, severities: ["low"] })).to.equal(10); // findings decide when present
    expect(categoryTenths({ ...informed, severities: ["medium", "high", "low"] })).to.equal(70); // 6 + (3 + 1) / 4
    expect(categoryTenths({ ...informed, severities: ["low", "low"] })).to.equal(13); // 1 + 0.25 -> 1.3 (half up)
    expect(categoryTenths({ ...informed, severities: ["critical", "critical"] })).to.equal(100);
  });

  it("the score is the worst category plus a tenth of the others, capped at 10", () => {
    expect(overallTenths([])).to.equal(0);
    expect(overallTenths([30, 60, 0, 0, 0, 0])).to.equal(63);
    expect(overallTenths([100, 100, 100, 100, 100, 100])).to.equal(100);
    expect(overallTenths([30, 30, 30, 30, 30, 30])).to.equal(45);
  });

  it("gives the score, level and per-category scores", () => {
    const r = riskScore([
      { ...informed, severities: ["medium"] },
      { ...informed, severities: ["high"] },
      { ...informed, severities: [] },
      { informed: false, severities: [] },
      { ...informed, severities: ["low"] },
      { ...informed, severities: [] },
    ]);
    // 6 + (3 + 3 + 1) / 10 = 6.7
    expect(r).to.deep.equal({ score: 6.7, level: "high", categories: [3, 6, 0, 3, 1, 0] });
    expect(riskScore(Array.from({ length: 6 }, () => ({ ...informed, severities: [] })))).to.deep.equal({ score: 0, level: "low", categories: [0, 0, 0, 0, 0, 0] });
    expect(riskScore([{ ...informed, severities: ["critical"] }, { ...informed, severities: [] }]).score).to.equal(10);
  });

  it("bands the levels at 3, 5 and 7.5", () => {
    expect([2.9, 3, 4.9, 5, 7.4, 7.5, 10].map(levelOf)).to.deep.equal(["low", "moderate", "moderate", "high", "high", "critical", "critical"]);
  });
});

describe("vendor vetting: grounding of findings in the supplied materials", () => {
  const materials: Material[] = [
    { source: "vendor", title: "Vendor record", text: "name: Acme Hosting\njurisdiction: Delaware" },
    { source: "details", title: "Details", text: "Acme’s SOC 2 Type II report expired in March 2024.\nThey had   a data breach in 2023 affecting 12,000 customers." },
  ];

  it("finds verbatim, reflowed and elided quotes, not invented or trivial ones", () => {
    expect(quoteSources("SOC 2 Type II report expired in March 2024", materials)).to.deep.equal(["details"]);
    expect(quoteSources("“They had a data breach in 2023”", materials)).to.deep.equal(["details"]);
    expect(quoteSources("Acme's SOC 2 ... affecting 12,000 customers", materials)).to.deep.equal(["details"]);
    expect(quoteSources("revenue fell by 40% last year", materials)).to.deep.equal([]);
    expect(quoteSources("SOC 2 ... revenue fell", materials)).to.deep.equal([]);
    expect(quoteSources("2023", materials)).to.deep.equal([]);
    expect(quoteSources("", materials)).to.deep.equal([]);
  });

  it("counts only grounded findings and absences, and raises red flags from severity or the assessor's flag", () => {
    const empty = { information: "supplied" as const, summary: "Nothing of note.", findings: [] };
    const answer: ModelAssessment = {
      financial: { information: "none", summary: "No financial information supplied.", findings: [] },
      security: {
        information: "supplied",
        summary: "Expired attestation and a breach.",
        findings: [
          { severity: "high", title: "Breach", detail: "A 2023 breach.", basis: "stated", source: "details", evidence: "a data breach in 2023 affecting 12,000 customers", red_flag: false },
          { severity: "critical", title: "Invented", detail: "Not in the materials.", basis: "stated", source: "details", evidence: "the CEO was indicted for fraud", red_flag: true },
          { severity: "medium", title: "Expired SOC 2", detail: "Expired.", basis: "stated", source: "details", evidence: "SOC 2 Type II report expired in March 2024", red_flag: true },
        ],
      },
      compliance: { information: "none", summary: "Silent.", findings: [{ severity: "medium", title: "No DPA", detail: "No data processing terms supplied.", basis: "absent", source: "", evidence: "", red_flag: false }] },
      operational: empty,
      reputational: empty,
      legal: empty,
      summary: "Risky.",
    };
    const a = assess(answer, materials);
    const security = a.categories.find((c) => c.category === "security")!;
    expect(security.findings.map((f) => [f.id, f.grounded, f.counted, f.red_flag])).to.deep.equal([
      ["F1", true, true, true],
      ["F2", false, false, false],
      ["F3", true, true, true],
    ]);
    expect(security.score).to.equal(6.8); // high 6 + medium 3 / 4 = 6.75 -> 6.8; the invented critical is not counted
    expect(a.categories.map((c) => [c.category, c.score])).to.deep.equal([["financial", 3], ["security", 6.8], ["compliance", 3], ["operational", 0], ["reputational", 0], ["legal", 0]]);
    expect(a.risk_score).to.equal(7.4); // 6.8 + (3 + 3) / 10
    expect(a.risk_level).to.equal("high");
    expect(a.ungrounded_findings).to.equal(1);
    expect(a.red_flags.map((r) => [r.finding_id, r.reason])).to.deep.equal([["F1", "high severity"], ["F3", "flagged by the assessor as to resolve before contracting"]]);
  });
});

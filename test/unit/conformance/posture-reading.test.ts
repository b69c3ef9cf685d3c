import { expect } from "chai";
import { conformanceData, findFramework, loadConformanceData } from "../../../src/conformance/frameworks.js";
import { phrasePattern, readPosture, readStatements, readValue } from "../../../src/conformance/posture-reading.js";
import { conflictsOf, evaluateControls, factState } from "../../../src/conformance/control-evaluation.js";

describe("conformance: framework data and the matching rules for stated posture", () => {
  const data = conformanceData();

  it("ships NIST AI RMF 1.0 (19 categories) and NIST CSF 2.0 (22 categories), every control mapped to known facts", () => {
    expect(() => loadConformanceData()).not.to.throw();
    expect(data.frameworks.map((f) => [f.id, f.controls.length])).to.deep.equal([["nist-ai-rmf-1.0", 19], ["nist-csf-2.0", 22]]);
    const rmf = findFramework(data, "NIST-AI-RMF")!;
    expect(rmf.controls.map((c) => c.function)).to.include.members(["GOVERN", "MAP", "MEASURE", "MANAGE"]);
    expect(findFramework(data, "Cybersecurity Framework")!.id).to.equal("nist-csf-2.0");
    expect(findFramework(data, "nist csf 2.0")!.id).to.equal("nist-csf-2.0");
    expect(findFramework(data, "ISO 27001")).to.equal(undefined);
  });

  it("reads posture values", () => {
    expect([true, false, 3, 0, ["x"], [], "AES-256", "No", "disabled", "in_progress", "Planned", "N/A", "", "unknown", null].map(readValue)).to.deep.equal([
      "affirmed", "denied", "affirmed", "denied", "affirmed", "denied", "affirmed", "denied", "denied", "partial", "partial", "not_applicable", undefined, undefined, undefined,
    ]);
  });

  it("normalizes keys: nested paths, status suffixes, prefixes as details; unknown keys are listed", () => {
    const r = readPosture(data, { "Multi-Factor Authentication": { Enabled: true }, encryption: { at_rest: "AES-256" }, sso: { scope: "all staff" }, "Backup-Policy": "draft", shoe_size: 42 });
    expect(r.readings.map((x) => [x.fact, x.location, x.matched, x.reading, x.detail])).to.deep.equal([
      ["mfa", "Multi-Factor Authentication.Enabled", "multi_factor_authentication", "affirmed", false],
      ["encryption_at_rest", "encryption.at_rest", "encryption_at_rest", "affirmed", false],
      ["access_control", "sso.scope", "sso", "affirmed", true],
      ["backups", "Backup-Policy", "backup_policy", "partial", false],
    ]);
    expect(r.unmappedKeys).to.deep.equal(["shoe_size"]);
  });

  it("reads statements clause by clause: negation denies, planning is partial, whole words only", () => {
    const r = readStatements(data, ["We enforce MFA everywhere; we don't have a SIEM.", "Pen tests are planned for Q3, but backups run nightly.", "Contractors use 2FA too.", "We love customers"]);
    expect(r.readings.map((x) => [x.fact, x.location, x.matched, x.reading])).to.deep.equal([
      ["mfa", "statements[0]", "mfa", "affirmed"],
      ["event_analysis", "statements[0]", "siem", "denied"],
      ["vulnerability_management", "statements[1]", "pen test", "partial"],
      ["backups", "statements[1]", "backup", "affirmed"],
      ["mfa", "statements[2]", "2fa", "affirmed"],
    ]);
    expect(r.unmatchedStatements).to.deep.equal([3]);
    expect(phrasePattern("incident response plan").test("Our incident-response   plans are tested")).to.equal(true);
    expect(phrasePattern("tls").test("we use atlas")).to.equal(false);
  });

  it("a fact's state: posture over statements, self-contradiction is partial; controls follow their facts", () => {
    const both = [...readPosture(data, { mfa: true, access_control: false }).readings, ...readStatements(data, ["MFA is not enforced for contractors", "RBAC is enforced"]).readings];
    expect(factState(both.filter((r) => r.fact === "mfa"))).to.equal("affirmed");
    expect(factState(both.filter((r) => r.fact === "access_control"))).to.equal("denied");
    expect(factState(readPosture(data, { mfa: true, two_factor: "no" }).readings)).to.equal("partial");
    expect(conflictsOf(both).map((c) => c.fact)).to.deep.equal(["mfa", "access_control"]);
    const csf = findFramework(data, "nist-csf-2.0")!;
    const controls = evaluateControls(data, csf, both, new Map([["GV.OC", ""]]));
    expect(controls.find((c) => c.id === "PR.AA")).to.deep.include({ status: "partially_met" });
    expect(controls.find((c) => c.id === "GV.OC")).to.deep.include({ status: "not_applicable", not_applicable_reason: "declared not applicable by the buyer" });
    expect(controls.find((c) => c.id === "ID.AM")).to.deep.include({ status: "not_addressed" });
  });
});

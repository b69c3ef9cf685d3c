import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { pollResult } from "../../fixtures/results.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";
import { ConformanceOutput } from "../../../src/skus/security-conformance-check.js";

const SKU = "security.conformance-check";
const PRICE = 250_000n;

const CSF_CALL = {
  framework: "NIST CSF 2.0",
  subject: "Acme Agents Ltd",
  posture: {
    mfa: true,
    access_control: { rbac: true },
    encryption_at_rest: "AES-256",
    encryption: { in_transit: "TLS 1.3" },
    backups: "planned",
    incident_response_plan: true,
    security_policy: true,
    siem: false,
    disaster_recovery: "n/a",
    vendor_risk_management: "in progress",
    favourite_color: "blue",
  },
  statements: [
    "Our CISO owns security and reports to the board quarterly.",
    "We run continuous monitoring with an EDR on every laptop.",
    "We do not run phishing simulations yet.",
    "Customers get breach notification within 72 hours.",
    "We love our customers.",
    "MFA is not enforced for contractors.",
  ],
  not_applicable: [{ control: "PR.IR", reason: "serverless: the cloud provider's resilience applies" }],
};

const AI_RMF_CALL = {
  framework: "nist ai rmf",
  posture: {
    ai_policy: true,
    eu_ai_act: "mapped to our use cases",
    model_registry: true,
    ai_risk_owner: "Head of ML",
    human_oversight: { human_in_the_loop: true },
    evals: true,
    ai_red_teaming: true,
    bias_testing: "planned",
    model_monitoring: true,
    vendor_risk_management: true,
    kill_switch: true,
  },
  statements: ["We document intended use for every model in a model card.", "We have no formal AI impact assessment.", "User feedback is collected through an in-app feedback channel."],
  not_applicable: ["MANAGE 3"],
};

const statuses = (d: Json, status: string) => d.controls.filter((c: Json) => c.status === status).map((c: Json) => c.id);

describe("security.conformance-check: stated posture mapped to a governance framework's controls (async)", function () {
  this.timeout(120_000);
  const up = upstreamForSuite((_req, res) => void res.writeHead(404).end());

  const deliver = async (body: unknown) => {
    const res = await up.pay(SKU, body);
    expect(res.status, await res.clone().text()).to.equal(200);
    const done = await pollResult(up.srv, ((await res.json()) as Json).job_id);
    expect(done.status, JSON.stringify(done)).to.equal("delivered");
    expect(ConformanceOutput.safeParse(done.deliverable).error).to.equal(undefined);
    return done;
  };

  it("maps a posture to NIST CSF 2.0 categories: exact statuses, coverage, gaps, evidence, conflicts; charged the list price", async () => {
    const before = await up.balance();
    const done = await deliver(CSF_CALL);
    expect(done.powered_by).to.equal("svc-conformance/stated-posture");
    const d = done.deliverable;
    expect(d.framework).to.deep.include({ id: "nist-csf-2.0", name: "NIST Cybersecurity Framework", version: "2.0", level: "category" });
    expect(d.framework.source).to.include({ url: "https://doi.org/10.6028/NIST.CSWP.29", published: "2024-02-26" });
    expect(d).to.include({ evidence_class: "self_declared", subject: "Acme Agents Ltd" });
    expect(d.scope).to.contain("not an audit");
    expect(d.controls.map((c: Json) => c.id)).to.deep.equal(["GV.OC", "GV.RM", "GV.RR", "GV.PO", "GV.OV", "GV.SC", "ID.AM", "ID.RA", "ID.IM", "PR.AA", "PR.AT", "PR.DS", "PR.PS", "PR.IR", "DE.CM", "DE.AE", "RS.MA", "RS.AN", "RS.CO", "RS.MI", "RC.RP", "RC.CO"]);
    expect(statuses(d, "met")).to.deep.equal(["GV.RR", "GV.PO", "PR.AA", "DE.CM", "RS.MA", "RS.CO"]);
    expect(statuses(d, "partially_met")).to.deep.equal(["GV.SC", "PR.DS"]);
    expect(statuses(d, "not_applicable")).to.deep.equal(["PR.IR", "RC.RP"]);
    expect(d.summary).to.deep.equal({ controls: 22, applicable: 20, met: 6, partially_met: 2, not_addressed: 12, not_applicable: 2, coverage_pct: 35, met_pct: 30 });
    expect(d.by_function.map((f: Json) => [f.function, f.met, f.partially_met, f.not_addressed, f.not_applicable, f.coverage_pct])).to.deep.equal([
      ["GOVERN", 2, 1, 3, 0, 41.7],
      ["IDENTIFY", 0, 0, 3, 0, 0],
      ["PROTECT", 1, 1, 2, 1, 37.5],
      ["DETECT", 1, 0, 1, 0, 50],
      ["RESPOND", 2, 0, 2, 0, 50],
      ["RECOVER", 0, 0, 1, 1, 0],
    ]);

    const control = (id: string) => d.controls.find((c: Json) => c.id === id);
    // PR.DS: two facts affirmed (one through a nested key), backups only planned.
    expect(control("PR.DS").facts.map((f: Json) => [f.fact, f.state])).to.deep.equal([["encryption_at_rest", "affirmed"], ["encryption_in_transit", "affirmed"], ["backups", "partial"]]);
    expect(control("PR.DS").facts[1].evidence[0]).to.deep.equal({ source: "posture", location: "encryption.in_transit", value: "TLS 1.3", matched: "encryption_in_transit", reading: "affirmed" });
    expect(control("PR.DS").missing).to.deep.equal([{ fact: "backups", title: "Backups created, protected and tested", state: "partial" }]);
    // PR.AA is met by the posture; the contradicting statement is reported as a conflict.
    expect(control("PR.AA").facts.map((f: Json) => [f.fact, f.state])).to.deep.equal([["mfa", "affirmed"], ["access_control", "affirmed"]]);
    expect(d.conflicts).to.deep.equal([{ fact: "mfa", affirmed_by: ["mfa"], denied_by: ["statements[5]"], decided: "affirmed" }]);
    // Statements: a negation denies, a matched phrase affirms.
    expect(control("PR.AT").facts[0]).to.deep.include({ state: "denied" });
    expect(control("PR.AT").facts[0].evidence[0]).to.include({ source: "statement", location: "statements[2]", matched: "phishing simulation", reading: "denied" });
    expect(control("DE.CM").facts[0].evidence[0]).to.include({ location: "statements[1]", matched: "continuous monitoring", reading: "affirmed" });
    expect(control("DE.AE").facts[0].evidence[0]).to.include({ location: "siem", value: "false", reading: "denied" });
    expect(control("PR.IR")).to.include({ status: "not_applicable", not_applicable_reason: "serverless: the cloud provider's resilience applies" });
    expect(control("RC.RP").not_applicable_reason).to.contain("not applicable");
    // Gaps: every partially met or unaddressed control, with what is missing.
    expect(d.gaps.map((g: Json) => g.control)).to.deep.equal(["GV.OC", "GV.RM", "GV.OV", "GV.SC", "ID.AM", "ID.RA", "ID.IM", "PR.AT", "PR.DS", "PR.PS", "DE.AE", "RS.AN", "RS.MI", "RC.CO"]);
    expect(d.gaps.find((g: Json) => g.control === "GV.OC").missing.map((m: Json) => [m.fact, m.state])).to.deep.equal([["mission_context", "unstated"], ["legal_regulatory_requirements", "unstated"]]);
    expect(d.unmapped_posture_keys).to.deep.equal(["favourite_color"]);
    expect(d.unmatched_statements).to.deep.equal([4]);
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("maps a posture to NIST AI RMF 1.0 categories with exact coverage", async () => {
    const d = (await deliver(AI_RMF_CALL)).deliverable;
    expect(d.framework).to.deep.include({ id: "nist-ai-rmf-1.0", version: "1.0" });
    expect(d.framework.source.url).to.equal("https://doi.org/10.6028/NIST.AI.100-1");
    expect(d.controls).to.have.length(19);
    expect(statuses(d, "met")).to.deep.equal(["GOVERN 1", "GOVERN 5", "MEASURE 3", "MANAGE 2"]);
    expect(statuses(d, "partially_met")).to.deep.equal(["GOVERN 2", "GOVERN 3", "GOVERN 4", "GOVERN 6", "MAP 1", "MAP 3", "MAP 5", "MEASURE 2"]);
    expect(statuses(d, "not_addressed")).to.deep.equal(["MAP 2", "MAP 4", "MEASURE 1", "MEASURE 4", "MANAGE 1", "MANAGE 4"]);
    expect(statuses(d, "not_applicable")).to.deep.equal(["MANAGE 3"]);
    expect(d.summary).to.deep.equal({ controls: 19, applicable: 18, met: 4, partially_met: 8, not_addressed: 6, not_applicable: 1, coverage_pct: 44.4, met_pct: 22.2 });
    const map5 = d.controls.find((c: Json) => c.id === "MAP 5");
    expect(map5.facts.map((f: Json) => [f.fact, f.state])).to.deep.equal([["ai_impact_assessment", "denied"], ["stakeholder_feedback", "affirmed"]]);
    // A nested detail counts for its fact; two keys of one fact both show as evidence.
    const gov3 = d.controls.find((c: Json) => c.id === "GOVERN 3");
    expect(gov3.facts[1].evidence[0]).to.include({ location: "human_oversight.human_in_the_loop", matched: "human_oversight", reading: "affirmed" });
    const gov4 = d.controls.find((c: Json) => c.id === "GOVERN 4");
    expect(gov4.facts[1].evidence.map((e: Json) => e.location)).to.deep.equal(["evals", "ai_red_teaming"]);
    expect(d.conflicts).to.deep.equal([]);
  });

  it("reads posture statements as data: a statement about passwords is not refused by the content-trap gate", async () => {
    const d = (await deliver({ framework: "NIST CSF 2.0", statements: ["We never share passwords with vendors and rotate API keys monthly."] })).deliverable;
    expect(d.summary.controls).to.equal(22);
    expect(d.evidence_class).to.equal("self_declared");
  });

  it("is sold with its published input and output schemas", async () => {
    const catalog = (await (await fetch(`${up.srv.url}/v1/services`)).json()) as Json;
    for (const id of [SKU, "security.injection-resilience", "ops.due-diligence-scan"]) {
      const entry = catalog.services.find((s: Json) => s.sku_id === id);
      expect(entry.available, id).to.equal(true);
      expect(entry["x-output-schema"].type, id).to.equal("object");
    }
    const entry = catalog.services.find((s: Json) => s.sku_id === SKU);
    expect(entry["x-input-schema"].required).to.deep.equal(["framework"]);
    expect(entry["x-output-schema"].properties).to.include.keys("controls", "summary", "gaps", "evidence_class");
  });

  it("refuses bad input with 400 naming the field, before any challenge, charging nothing", async () => {
    await expectBadInputRefused(up, SKU, [
      [{ posture: { mfa: true } }, "framework"],
      [{ framework: "ISO 9001", posture: { mfa: true } }, "framework"],
      [{ framework: "nist-csf-2.0" }, "posture"],
      [{ framework: "nist-csf-2.0", posture: {}, statements: [] }, "posture"],
      [{ framework: "nist-csf-2.0", posture: { mfa: true }, not_applicable: ["XX.YY"] }, "not_applicable.0"],
      [{ framework: "nist-csf-2.0", statements: ["x".repeat(2001)] }, "statements.0"],
      [{ framework: "nist-csf-2.0", statements: ["ok"], posture: "mfa" }, "posture"],
    ]);
  });
});

import { expect } from "chai";
import { decimalProblem, fromUnits, toUnits } from "../../../src/finops/exact-decimal.js";
import { auditSpend, type UsageRecord } from "../../../src/finops/spend-audit.js";

const NOW = new Date("2026-10-01T12:00:00Z");
const rec = (o: Partial<UsageRecord> & { cost: UsageRecord["cost"] }): UsageRecord => ({ model: "m1", tokens_in: 1000, tokens_out: 500, timestamp: "2026-09-30T10:00:00Z", scope: "support", ...o });
const policy = { budget: { total: "1" }, allowed_scopes: ["support"] };

describe("exact decimals for spend audits", () => {
  it("parses and renders exactly, refusing exponent forms, negatives and more than 12 places", () => {
    expect(fromUnits(toUnits("0.1") + toUnits(0.2))).to.equal("0.3");
    expect(fromUnits(toUnits("0.000000000001") * 3n)).to.equal("0.000000000003");
    expect(fromUnits(toUnits("12") - toUnits("12.5"))).to.equal("-0.5");
    expect(decimalProblem(1e-7)).to.contain("decimal string");
    expect(decimalProblem("-1")).to.be.a("string");
    expect(decimalProblem("0.0000000000001")).to.be.a("string");
    expect(decimalProblem("1e3")).to.be.a("string");
    expect(decimalProblem(true)).to.be.a("string");
    expect(decimalProblem("3.25")).to.equal(undefined);
  });
});

describe("auditSpend", () => {
  it("totals per model and scope exactly, where float sums would drift", () => {
    const records = Array.from({ length: 10 }, (_, i) => rec({ cost: 0.1, model: i % 2 ? "m1" : "m2", timestamp: `2026-09-30T10:0${i}:00Z` }));
    const a = auditSpend(records, policy, NOW);
    expect(a.totals).to.deep.equal({ records: 10, tokens_in: "10000", tokens_out: "5000", cost: "1" });
    expect(a.budget).to.include({ total: "1", spent: "1", remaining: "0", utilization_bps: 10_000 });
    expect(a.by_model.map((m) => [m.model, m.cost, m.share_of_cost_bps])).to.deep.equal([["m2", "0.5", 5000], ["m1", "0.5", 5000]]);
    expect(a.within_budget).to.equal(true);
    expect(a.compliant).to.equal(true);
    expect(a.anomalies).to.deep.equal([]);
  });

  it("finds overruns with the record at which each budget was first exceeded, in time order", () => {
    const records = [
      rec({ id: "late", cost: "0.6", timestamp: "2026-09-30T12:00:00Z" }),
      rec({ id: "early", cost: "0.5", timestamp: "2026-09-30T08:00:00Z", scope: "research" }),
      rec({ id: "mid", cost: "0.25", timestamp: "2026-09-30T09:00:00Z" }),
    ];
    const a = auditSpend(records, { budget: { total: "1", per_model: { m1: "2" }, per_scope: { support: "0.5" } }, allowed_scopes: ["support", "research"] }, NOW);
    expect(a.overruns).to.deep.equal([
      { level: "total", key: "*", budget: "1", spent: "1.35", over_by: "0.35", exceeded_at: { index: 0, id: "late", timestamp: "2026-09-30T12:00:00Z" } },
      { level: "scope", key: "support", budget: "0.5", spent: "0.85", over_by: "0.35", exceeded_at: { index: 0, id: "late", timestamp: "2026-09-30T12:00:00Z" } },
    ]);
    expect(a.budget.remaining).to.equal("-0.35");
    expect(a.within_budget).to.equal(false);
  });

  it("lists records outside the allowed scopes and models", () => {
    const a = auditSpend([rec({ cost: "0.1" }), rec({ cost: "0.2", scope: "marketing" }), rec({ cost: "0.3", model: "big" })], { ...policy, allowed_models: ["m1"] }, NOW);
    expect(a.out_of_scope).to.deep.equal([
      { index: 1, id: null, reason: "scope_not_allowed", scope: "marketing", model: "m1", cost: "0.2" },
      { index: 2, id: null, reason: "model_not_allowed", scope: "support", model: "big", cost: "0.3" },
    ]);
    expect(a.by_scope.find((s) => s.scope === "marketing")).to.include({ allowed: false });
    expect(a.compliant).to.equal(false);
  });

  it("flags anomalies by the documented rules", () => {
    const records = [
      rec({ id: "a", cost: "0.01" }),
      rec({ id: "b", cost: "0.011", timestamp: "2026-09-30T10:01:00Z" }),
      rec({ id: "c", cost: "0.012", timestamp: "2026-09-30T10:02:00Z" }),
      rec({ id: "d", cost: "0.2", timestamp: "2026-09-30T10:03:00Z" }), // 20x the median rate
      rec({ id: "a", cost: "0.01", timestamp: "2026-09-30T10:04:00Z" }), // id repeats
      rec({ id: "e", cost: "0.5", tokens_in: 0, tokens_out: 0, timestamp: "2026-09-30T10:05:00Z" }),
      rec({ id: "f", cost: "0", timestamp: "2026-09-30T10:06:00Z" }),
      rec({ id: "g", cost: "0.15", tokens_in: 20_000, tokens_out: 10_000, timestamp: "2026-09-30T10:07:00Z" }), // 20x tokens
      rec({ id: "h", cost: "0.01", timestamp: "2026-10-09T10:00:00Z" }), // future
      rec({ id: "i", cost: "0.01", timestamp: "2026-08-01T10:00:00Z" }), // before the period
    ];
    const a = auditSpend(records, { budget: { total: "10", period_start: "2026-09-01T00:00:00Z", period_end: "2026-10-31T00:00:00Z" }, allowed_scopes: ["support"] }, NOW);
    const by = (rule: string) => a.anomalies.filter((x) => x.rule === rule).map((x) => x.id);
    expect(by("duplicate_record")).to.deep.equal(["a"]);
    expect(by("rate_outlier")).to.deep.equal(["d"]);
    expect(by("cost_without_tokens")).to.deep.equal(["e"]);
    expect(by("tokens_without_cost")).to.deep.equal(["f"]);
    expect(by("token_spike")).to.deep.equal(["g"]);
    expect(by("future_timestamp")).to.deep.equal(["h"]);
    expect(by("outside_period")).to.deep.equal(["i"]);
  });

  it("checks costs against published prices per million tokens, within 1%", () => {
    const prices = { m1: { input_per_million: "3", output_per_million: "15" } };
    // 1000 in x 3/M + 500 out x 15/M = 0.003 + 0.0075 = 0.0105
    const a = auditSpend([rec({ id: "ok", cost: "0.0105" }), rec({ id: "near", cost: "0.0106", timestamp: "2026-09-30T10:01:00Z" }), rec({ id: "off", cost: "0.02", timestamp: "2026-09-30T10:02:00Z" })], { ...policy, prices }, NOW);
    expect(a.anomalies.filter((x) => x.rule === "price_mismatch").map((x) => x.id)).to.deep.equal(["off"]);
    expect(a.anomalies.find((x) => x.rule === "price_mismatch")!.detail).to.contain("0.0105");
  });
});

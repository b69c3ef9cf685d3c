import { expect } from "chai";
import { TokenSpendAuditOutput } from "../../../src/skus/finops-token-spend-audit.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { callPaid, expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";

const SKU = "finops.token-spend-audit";

const records = [
  { id: "r1", model: "claude-sonnet", tokens_in: 12000, tokens_out: 3000, cost: "0.081", timestamp: "2026-09-01T09:00:00Z", scope: "support" },
  { id: "r2", model: "claude-sonnet", tokens_in: 8000, tokens_out: 2000, cost: 0.054, timestamp: "2026-09-01T10:00:00Z", scope: "support" },
  { id: "r3", model: "claude-sonnet", tokens_in: 10000, tokens_out: 2500, cost: "0.0675", timestamp: "2026-09-01T11:00:00Z", scope: "support" },
  { id: "r4", model: "gpt-big", tokens_in: 50000, tokens_out: 10000, cost: "0.35", timestamp: "2026-09-01T12:00:00Z", scope: "marketing" },
  { id: "r5", model: "claude-sonnet", tokens_in: 9000, tokens_out: 2000, cost: "0.6", timestamp: "2026-09-01T13:00:00Z", scope: "support" },
  { id: "r2", model: "claude-sonnet", tokens_in: 8000, tokens_out: 2000, cost: "0.054", timestamp: "2026-09-01T10:00:00Z", scope: "support" },
];

describe("finops.token-spend-audit: usage records against budget and scope, exact arithmetic", function () {
  this.timeout(60_000);
  let srv: TestServer;
  let buyer: Buyer;
  before(async () => {
    srv = await startTestServer();
    buyer = await newBuyer(srv);
  });
  after(() => srv.close());

  const pay = (body: unknown) => callPaid(srv, buyer, SKU, body);

  it("totals, overruns, out-of-scope records and anomalies for the list price", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await pay({
      agent: "support-bot",
      budget: { total: "1", per_model: { "claude-sonnet": "0.5" }, period_start: "2026-09-01T00:00:00Z", period_end: "2026-09-30T23:59:59Z" },
      allowed_scopes: ["support"],
      allowed_models: ["claude-sonnet"],
      prices: { "claude-sonnet": { input_per_million: "3", output_per_million: "15" } },
      records,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 50_000n);
    const d = res.body.deliverable;
    expect(TokenSpendAuditOutput.safeParse(d).error).to.equal(undefined);
    expect(d).to.include({ agent: "support-bot", currency: "USD", within_budget: false, compliant: false });
    // 0.081 + 0.054 + 0.0675 + 0.35 + 0.6 + 0.054, exactly
    expect(d.totals).to.deep.equal({ records: 6, tokens_in: "97000", tokens_out: "21500", cost: "1.2065" });
    expect(d.budget).to.include({ total: "1", spent: "1.2065", remaining: "-0.2065", utilization_bps: 12065 });
    expect(d.overruns.map((o: Json) => [o.level, o.key, o.over_by, o.exceeded_at.id])).to.deep.equal([
      ["total", "*", "0.2065", "r5"],
      ["model", "claude-sonnet", "0.3565", "r5"],
    ]);
    expect(d.out_of_scope.map((o: Json) => [o.id, o.reason])).to.deep.equal([["r4", "scope_not_allowed"], ["r4", "model_not_allowed"]]);
    const rules = d.anomalies.map((a: Json) => `${a.id}:${a.rule}`);
    expect(rules).to.include.members(["r5:price_mismatch", "r5:rate_outlier", "r2:duplicate_record"]);
    expect(rules).not.to.include("r1:price_mismatch");
    expect(d.by_model.find((m: Json) => m.model === "claude-sonnet")).to.include({ cost: "0.8565", budget: "0.5", over_budget: true, allowed: true });
    expect(d.rules).to.have.keys("duplicate_record", "cost_without_tokens", "tokens_without_cost", "rate_outlier", "token_spike", "price_mismatch", "outside_period", "future_timestamp");
    expect(d.source).to.include({ records: 6 });
    await expectLedgerConsistent(srv.ds);
  });

  it("refuses bad input with 400 naming the field, before any challenge, charging nothing", async () => {
    const base = { budget: { total: "1" }, allowed_scopes: ["support"], records: [records[0]] };
    await expectBadInputRefused({ srv, buyer }, SKU, [
      [{ ...base, records: [] }, "records"],
      [{ ...base, records: [{ ...records[0], cost: "12,50" }] }, "records.0.cost"],
      [{ ...base, records: [{ ...records[0], cost: 1e-7 }] }, "records.0.cost"],
      [{ ...base, records: [{ ...records[0], tokens_in: -5 }] }, "records.0.tokens_in"],
      [{ ...base, records: [{ ...records[0], timestamp: "yesterday" }] }, "records.0.timestamp"],
      [{ ...base, budget: { total: "-1" } }, "budget.total"],
      [{ ...base, allowed_scopes: [] }, "allowed_scopes"],
    ]);
  });
});

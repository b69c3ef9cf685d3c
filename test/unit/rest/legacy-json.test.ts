import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { fromLegacyJson, LegacyJsonError, toLegacyJson } from "../../../src/rest/legacy-json.js";
import { CreateRequestRequestSchema, SubmitBidRequestSchema } from "../../../gen/svc/marketplace/v1/marketplace_service_pb.js";
import { BidState, RequestSchema, RequestState } from "../../../gen/svc/marketplace/v1/marketplace_pb.js";
import { GetHealthResponseSchema } from "../../../gen/svc/catalog/v1/catalog_service_pb.js";
import { MintTestFundsRequestSchema } from "../../../gen/svc/payment/v1/payment_service_pb.js";
import { AttestRequestSchema, Verdict } from "../../../gen/svc/witness/v1/witness_service_pb.js";

describe("legacy JSON mapping", () => {
  it("renders atomic amounts as *_usd numbers, enums in short lowercase, timestamps as RFC 3339", () => {
    const req = create(RequestSchema, {
      requestId: "req_1",
      budgetAmount: "10000",
      state: RequestState.OPEN,
      escrow: { amount: "10000", heldAmount: "2500", state: "held" },
      bids: [{ bidId: "b1", priceAmount: "1234567", state: BidState.SUBMITTED }],
      createTime: timestampFromDate(new Date("2026-11-21T10:00:00.000Z")),
    });
    const json = toLegacyJson(RequestSchema, req);
    expect(json).to.include({ request_id: "req_1", budget_usd: 0.01, state: "open", create_time: "2026-11-21T10:00:00.000Z", witness_optout: false });
    expect(json.escrow).to.include({ amount_usd: 0.01, held_usd: 0.0025 });
    expect((json.bids as Record<string, unknown>[])[0]).to.include({ price_usd: 1.234567, state: "submitted" });
    expect(json).to.not.have.property("budget_amount");
    expect(json.tags).to.deep.equal([]);
  });

  it("leaves an unset optional amount out, and renders int64 as a number", () => {
    const bid = toLegacyJson(SubmitBidRequestSchema, create(SubmitBidRequestSchema, { requestId: "r" }));
    expect(bid).to.not.have.property("price_usd");
    const health = toLegacyJson(GetHealthResponseSchema, create(GetHealthResponseSchema, { uptimeSeconds: 42n }));
    expect(health.uptime_seconds).to.equal(42);
  });

  it("parses *_usd numbers into exact atomic strings", () => {
    const msg = fromLegacyJson(CreateRequestRequestSchema, { capability_id: "c", task_description: "t", budget_usd: 0.07, tags: ["a"] });
    expect(msg.budgetAmount).to.equal("70000");
    expect(msg.tags).to.deep.equal(["a"]);
    expect(fromLegacyJson(CreateRequestRequestSchema, { capability_id: "c" }).budgetAmount).to.equal(undefined);
    expect(fromLegacyJson(MintTestFundsRequestSchema, { amount_usd: 5 }).amount).to.equal("5000000");
  });

  it("refuses amounts that are negative, too precise or not numbers, naming the field", () => {
    for (const bad of [-1, 0.0000001, "abc", true, 1e21]) {
      expect(() => fromLegacyJson(CreateRequestRequestSchema, { budget_usd: bad as never }), String(bad)).to.throw(LegacyJsonError, /budget_usd/);
    }
  });

  it("accepts enum values by short lowercase name and refuses unknown ones", () => {
    expect(fromLegacyJson(AttestRequestSchema, { verdict: "pass" }).verdict).to.equal(Verdict.PASS);
    expect(fromLegacyJson(AttestRequestSchema, { verdict: "INCONCLUSIVE" }).verdict).to.equal(Verdict.INCONCLUSIVE);
    expect(() => fromLegacyJson(AttestRequestSchema, { verdict: "maybe" })).to.throw(LegacyJsonError, /pass, fail, inconclusive/);
    expect(() => fromLegacyJson(AttestRequestSchema, { verdict: "unspecified" })).to.throw(LegacyJsonError);
  });

  it("ignores unknown keys and refuses a non-object body", () => {
    expect(fromLegacyJson(AttestRequestSchema, { job_id: "j", surprise: 1 }).jobId).to.equal("j");
    expect(() => fromLegacyJson(AttestRequestSchema, [] as never)).to.throw(LegacyJsonError);
  });

  it("refuses wrong scalar types through the protobuf codec", () => {
    expect(() => fromLegacyJson(AttestRequestSchema, { reason: 5 })).to.throw(/reason/);
  });
});

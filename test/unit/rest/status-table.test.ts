import { expect } from "chai";
import { Code, ConnectError } from "@connectrpc/connect";
import { httpStatusFor, STATUS_BY_CODE, STATUS_BY_REASON } from "../../../src/rest/status-table.js";
import { errorReason, errors } from "../../../src/platform/rpc/errors.js";

describe("REST status table", () => {
  // The spec's Errors table, reason by reason.
  const SPEC: [string, Code, number][] = [
    ["empty_result", Code.InvalidArgument, 400],
    ["auth_required", Code.Unauthenticated, 401],
    ["payment_required", Code.FailedPrecondition, 402],
    ["note_unfunded", Code.FailedPrecondition, 402],
    ["requester_id_mismatch", Code.PermissionDenied, 403],
    ["agent_name_mismatch", Code.PermissionDenied, 403],
    ["not_assigned_provider", Code.PermissionDenied, 403],
    ["request_not_found", Code.NotFound, 404],
    ["not_registered", Code.NotFound, 404],
    ["gate_refused", Code.FailedPrecondition, 409],
    ["kit_outdated", Code.FailedPrecondition, 409],
    ["body_too_large", Code.InvalidArgument, 413],
    ["rate_limited", Code.ResourceExhausted, 429],
  ];
  for (const [reason, code, status] of SPEC) {
    it(`${reason} (${Code[code]}) -> ${status}`, () => expect(httpStatusFor(code, reason)).to.equal(status));
  }

  it("maps every Connect code to a status, unknown reasons by code", () => {
    for (const code of Object.values(Code).filter((c): c is Code => typeof c === "number")) {
      expect(STATUS_BY_CODE[code], Code[code]).to.be.a("number");
      expect(httpStatusFor(code, "some_reason_not_in_the_table")).to.equal(STATUS_BY_CODE[code]);
    }
    expect(httpStatusFor(Code.Internal, undefined)).to.equal(500);
    expect(httpStatusFor(Code.Unimplemented, undefined)).to.equal(501);
  });

  it("only uses client-error or payment statuses for reasons", () => {
    for (const [reason, status] of Object.entries(STATUS_BY_REASON)) {
      expect(status, reason).to.be.within(400, 499);
    }
  });

  it("builds errors that carry their reason in ErrorInfo", () => {
    const cases: [ConnectError, Code, string][] = [
      [errors.authRequired(), Code.Unauthenticated, "auth_required"],
      [errors.gateRefused("breaker_open", "upstream failing"), Code.FailedPrecondition, "breaker_open"],
      [errors.notFound("request_not_found", "no such request"), Code.NotFound, "request_not_found"],
      [errors.unimplemented("x"), Code.Unimplemented, "unimplemented"],
    ];
    for (const [err, code, reason] of cases) {
      expect(err.code).to.equal(code);
      expect(errorReason(err)).to.equal(reason);
      expect(httpStatusFor(err.code, errorReason(err))).to.equal(STATUS_BY_REASON[reason] ?? STATUS_BY_CODE[code]);
    }
  });
});

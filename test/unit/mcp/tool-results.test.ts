import { expect } from "chai";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { PaymentRequiredSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { errors, rpcError } from "../../../src/platform/rpc/errors.js";
import { createLogger } from "../../../src/platform/log.js";
import { toolErrorResult } from "../../../src/mcp/tool-results.js";
import { negotiateProtocolVersion } from "../../../src/mcp/protocol-versions.js";
import { paidToolOutputSchema } from "../../../src/mcp/output-schemas.js";

describe("mcp/tool-results: gate errors as MCP tool results", () => {
  const log = createLogger("silent");
  const challenge = (error: string) =>
    create(PaymentRequiredSchema, {
      x402Version: 2,
      error,
      resource: { url: "http://x/v1/services/agent.trust-badge", description: "d", mimeType: "application/json" },
      accepts: [{ scheme: "exact", network: "eip155:84532", amount: "10000", asset: "0xA", payTo: "0xB", maxTimeoutSeconds: 60 }],
    });

  it("a failed settlement answers the PaymentRequired with the failed settle response, per the x402 MCP transport", () => {
    const err = rpcError(Code.FailedPrecondition, "payment_failed", "settlement failed: transaction_reverted", { details: [{ desc: PaymentRequiredSchema, value: challenge("transaction_reverted") }] });
    const settle = { success: false, errorReason: "transaction_reverted", transaction: "", network: "eip155:84532", payer: "0xC" };
    const res = toolErrorResult("agent.trust-badge", err, log, settle);
    expect(res.isError).to.equal(true);
    expect(res.structuredContent).to.deep.include({ x402Version: 2, error: "transaction_reverted", "x402/payment-response": settle });
    expect((res.structuredContent as any).resource.url).to.equal("mcp://tool/agent.trust-badge");
    const fallback = JSON.parse((res.content[0] as { text: string }).text);
    expect(fallback).to.deep.equal({ "x402/error": { code: 402, message: "settlement failed: transaction_reverted", data: res.structuredContent } });
  });

  it("a refusal carries its reason and the HTTP status; an internal error hides its message", () => {
    const refused = toolErrorResult("x.y", errors.resourceExhausted("rate_limited", "slow down"), log);
    expect(refused.structuredContent).to.deep.equal({ error: { code: "rate_limited", message: "slow down", http_status: 429 } });
    const internal = toolErrorResult("x.y", new Error("db password is hunter2"), log);
    expect(internal.structuredContent).to.deep.equal({ error: { code: "internal", message: "internal error", http_status: 500 } });
    expect(JSON.stringify(internal)).to.not.contain("hunter2");
  });

  it("negotiates only the spec's three protocol versions", () => {
    for (const v of ["2025-06-18", "2025-03-26", "2024-11-05"]) expect(negotiateProtocolVersion(v)).to.equal(v);
    for (const v of ["2025-11-25", "2024-10-07", "nonsense"]) expect(negotiateProtocolVersion(v)).to.equal("2025-06-18");
  });

  it("keeps a success schema's $defs at the root of the output schema so its refs resolve", () => {
    const schema = paidToolOutputSchema({ type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } });
    expect(schema.$defs).to.deep.equal({ A: { type: "string" } });
    expect((schema.anyOf as any[])[0]).to.deep.equal({ type: "object", properties: { a: { $ref: "#/$defs/A" } } });
  });
});

import { expect } from "chai";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAddress, generatePrivateKey } from "viem/accounts";
import type { JsonObject } from "@bufbuild/protobuf";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { SealEntity } from "../../../src/skus/seal.entity.js";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { walletClient } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };

// A call whose payment never settles leaves nothing behind: engines only compute in `run`, and their
// lasting effects (seal rows, proof-rail records) are written in the settlement's transaction. Here the
// payment verifies, the engine runs, and then the buyer moves its funds away before the settlement, so
// the facilitator refuses to settle (insufficient balance).

describe("a delivered call whose settlement fails leaves nothing behind", function () {
  this.timeout(120_000);
  let srv: TestServer;
  /** When set, the next engine run moves this buyer's USDC away after producing its deliverable. */
  let drain: Buyer | undefined;
  let produced: JsonObject | undefined;
  const sink = privateKeyToAddress(generatePrivateKey());

  const moveFundsAway = async (b: Buyer) => {
    const balance = await usdcBalance(srv, b.address);
    const hash = await walletClient(srv, b).writeContract({ address: srv.chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "transfer", args: [sink, balance] });
    await srv.chain.publicClient.waitForTransactionReceipt({ hash });
  };
  const unsettling = (h: SkuHandler<any>): SkuHandler<any> => ({
    ...h,
    run: async (input, ctx) => {
      produced = await h.run(input, ctx);
      const b = drain;
      drain = undefined;
      if (b) await moveFundsAway(b);
      return produced;
    },
  });

  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    for (const id of ["attestation.single-use-seal", "security.audit-attestation"]) handlers.set(id, unsettling(handlers.get(id)!));
    srv = await startTestServer({}, { handlers });
  });
  after(() => srv.close());

  const pay = async (b: Buyer, sku: string, body: unknown) => {
    produced = undefined;
    const res = await wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(b.account)))(`${srv.url}/v1/services/${sku}`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /** Pays with funds moved away mid-call: the settlement fails and nothing is charged. */
  const payUnsettled = async (sku: string, body: unknown) => {
    const b = await newBuyer(srv);
    const before = await usdcBalance(srv, b.address);
    const sinkBefore = await usdcBalance(srv, sink);
    const treasuryBefore = await usdcBalance(srv, srv.chain.treasury);
    drain = b;
    const res = await pay(b, sku, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(402);
    expect(res.body.code, JSON.stringify(res.body)).to.equal("payment_failed");
    expect(produced, "the engine ran").to.not.equal(undefined);
    const rows = await srv.ds.manager.findBy(X402PaymentEntity, { payer: b.address });
    expect(rows.map((r) => [r.state, r.errorReason])).to.deep.equal([["failed", "invalid_exact_evm_insufficient_balance"]]);
    expect((await usdcBalance(srv, b.address)) + (await usdcBalance(srv, sink)) - sinkBefore, "nothing charged").to.equal(before);
    expect(await usdcBalance(srv, srv.chain.treasury)).to.equal(treasuryBefore);
    return produced as Json;
  };

  it("attestation.single-use-seal: no seal row, no proof record, nothing to verify", async () => {
    const d = await payUnsettled("attestation.single-use-seal", { producer: "p", content: "never settled" });
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: d.seal_id })).to.equal(0);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { proofId: d.proof_id })).to.equal(0);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { settlementRef: d.seal_id })).to.equal(0);
    expect((await fetch(`${srv.url}/v1/proofs/${d.proof_id}`)).status).to.equal(404);
    const verified = await fetch(`${srv.url}/v1/seals/${d.seal_id}/verify`, { method: "POST", headers: json, body: JSON.stringify({ content: "never settled" }) });
    expect(verified.status).to.equal(404);

    // The same engine with a payment that settles leaves its seal and proof record.
    const ok = await pay(await newBuyer(srv), "attestation.single-use-seal", { producer: "p", content: "settled" });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(await srv.ds.manager.countBy(SealEntity, { sealId: ok.body.deliverable.seal_id })).to.equal(1);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { proofId: ok.body.deliverable.proof_id })).to.equal(1);
    await expectLedgerConsistent(srv.ds);
  });

  it("security.audit-attestation: no proof record of the statement", async () => {
    const body = { subject: "vault", auditor: "Acme Audits", deliverable_sha256: "ab".repeat(32), audit: { scope: "Vault.sol", performed_at: "2026-09-01T00:00:00Z", result: "pass" } };
    const d = await payUnsettled("security.audit-attestation", body);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { proofId: d.proof.proof_id })).to.equal(0);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { settlementRef: d.attestation_id })).to.equal(0);
    expect((await fetch(`${srv.url}/v1/proofs/${d.proof.proof_id}`)).status).to.equal(404);

    const ok = await pay(await newBuyer(srv), "security.audit-attestation", body);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    const served = ((await (await fetch(`${srv.url}/v1/proofs/${ok.body.deliverable.proof.proof_id}`)).json()) as Json).proof;
    expect(served.record_sha256).to.equal(ok.body.deliverable.proof.record_sha256);
    expect(served.body).to.deep.equal(ok.body.deliverable.statement);
    await expectLedgerConsistent(srv.ds);
  });
});

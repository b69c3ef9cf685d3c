import { expect } from "chai";
import { createHash } from "node:crypto";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { SealEntity } from "../../../src/skus/seal.entity.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { anchoredProof, runSvcVerify } from "../../fixtures/audit-e2e.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("attestation.single-use-seal: signed, on the proof rail, verified once as unused and then reporting its use", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let buyer: Buyer;
  before(async () => {
    srv = await startTestServer({ ANCHOR_BATCH_SIZE: "1000", ANCHOR_MAX_WAIT_SECONDS: "0", ANCHOR_POLL_MS: "100" });
    buyer = await newBuyer(srv);
  });
  after(() => srv.close());

  const seal = async (body: unknown) => {
    const res = await wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)))(`${srv.url}/v1/services/attestation.single-use-seal`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const verifySeal = async (sealId: string, body: unknown) => {
    const res = await fetch(`${srv.url}/v1/seals/${encodeURIComponent(sealId)}/verify`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const anchored = (proofId: string) => anchoredProof(srv, proofId);
  const svcVerify = (target: string) => runSvcVerify(srv, target);

  it("seals content for the list price: stored, signed, recorded as kind 30110 and verified by svc verify", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await seal({ producer: "report-writer", content: "Quarterly report, final.", produced_at: "2026-09-20T10:00:00Z" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 50_000n);
    const d = res.body.deliverable;
    expect(d).to.include({ content_sha256: sha256("Quarterly report, final."), producer: "report-writer", produced_at: "2026-09-20T10:00:00.000Z", payer: buyer.address, state: "unused" });
    expect(d.seal_id).to.match(/^seal_[0-9a-z]{20}$/);
    expect(d).to.include({ proof_url: `/v1/proofs/${d.proof_id}`, verify_url: `/v1/seals/${d.seal_id}/verify` });

    const row = await srv.ds.manager.findOneByOrFail(SealEntity, { sealId: d.seal_id });
    expect(row).to.include({ contentSha256: d.content_sha256, producer: "report-writer", payer: buyer.address, signature: d.signature, usedAt: null });

    const proof = await anchored(d.proof_id);
    expect(proof).to.include({ kind: 30110, task_class: "attestation", settlement_ref: d.seal_id });
    const payment = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address, skuId: "attestation.single-use-seal" });
    expect(proof.body).to.deep.equal({ seal_id: d.seal_id, content_sha256: d.content_sha256, producer: "report-writer", produced_at: d.produced_at, sealed_at: d.sealed_at, payer: buyer.address, payment_id: payment.paymentId });
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { proofId: d.proof_id })).to.equal(1);
    const r = await svcVerify(d.proof_id);
    expect(r.code, r.out).to.equal(0);
    for (const check of ["hash", "signature", "inclusion", "anchor"]) expect(r.out).to.match(new RegExp(`PASS\\s+${check}`));
    await expectLedgerConsistent(srv.ds);
  });

  it("verifies once as unused, then reports its use with the first verification's time; a mismatch never uses it", async () => {
    const content = "model weights manifest v7";
    const d = (await seal({ producer: "trainer", content_sha256: sha256(content) })).body.deliverable;

    const wrong = await verifySeal(d.seal_id, { content: "model weights manifest v8" });
    expect(wrong.status).to.equal(200);
    expect(wrong.body).to.include({ seal_id: d.seal_id, matches: false, state: "unused", consumed: false, content_sha256: sha256(content) });
    expect(wrong.body.used_at).to.equal(undefined);
    expect((await srv.ds.manager.findOneByOrFail(SealEntity, { sealId: d.seal_id })).usedAt).to.equal(null);

    const first = await verifySeal(d.seal_id, { content });
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ seal_id: d.seal_id, matches: true, state: "unused", consumed: true, producer: "trainer", produced_at: d.produced_at, sealed_at: d.sealed_at, proof_id: d.proof_id, proof_url: d.proof_url });
    expect(first.body.used_at).to.equal(undefined);

    for (const body of [{ content_sha256: sha256(content) }, { content_sha256: sha256(content).toUpperCase() }, { content }]) {
      const later = await verifySeal(d.seal_id, body);
      expect(later.status).to.equal(200);
      expect(later.body).to.include({ matches: true, state: "used", consumed: false, used_at: first.body.verified_at });
    }
    const wrongAfter = await verifySeal(d.seal_id, { content: "something else" });
    expect(wrongAfter.body).to.include({ matches: false, state: "used", consumed: false, used_at: first.body.verified_at });
    expect((await srv.ds.manager.findOneByOrFail(SealEntity, { sealId: d.seal_id })).usedAt!.toISOString()).to.equal(first.body.verified_at);
  });

  it("of 20 concurrent verifications of a fresh seal, exactly one sees it unused", async () => {
    const d = (await seal({ producer: "racer", content: "" })).body.deliverable;
    expect(d.content_sha256).to.equal(sha256(""));
    const answers = await Promise.all(Array.from({ length: 20 }, () => verifySeal(d.seal_id, { content: "" })));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(20).fill(200));
    const winners = answers.filter((a) => a.body.state === "unused");
    expect(winners).to.have.length(1);
    expect(winners[0]!.body).to.include({ matches: true, consumed: true });
    const losers = answers.filter((a) => a.body.state === "used");
    expect(losers).to.have.length(19);
    for (const l of losers) expect(l.body).to.include({ matches: true, consumed: false, used_at: winners[0]!.body.verified_at });
  });

  it("answers 404 seal_not_found for an unknown seal and 400 for a request without exactly one well-formed content field", async () => {
    for (const id of ["seal_00000000000000000000", "not-a-seal"]) {
      const res = await verifySeal(id, { content: "x" });
      expect(res.status, id).to.equal(404);
      expect(res.body.error.code).to.equal("seal_not_found");
    }
    const d = (await seal({ producer: "p", content: "x" })).body.deliverable;
    for (const [body, field] of [
      [{}, "content_sha256"],
      [{ content: "x", content_sha256: sha256("x") }, "content_sha256"],
      [{ content_sha256: "abc" }, "content_sha256"],
    ] as [unknown, string][]) {
      const res = await verifySeal(d.seal_id, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(JSON.stringify(res.body)).to.contain(field);
    }
    expect((await srv.ds.manager.findOneByOrFail(SealEntity, { sealId: d.seal_id })).usedAt).to.equal(null);
  });

  it("refuses bad input with 400 naming the field, before any challenge, charging nothing", async () => {
    const before = await usdcBalance(srv, buyer.address);
    for (const [body, field] of [
      [{ content: "x" }, "producer"],
      [{ producer: "p" }, "give exactly one of content or content_sha256"],
      [{ producer: "p", content: "x", content_sha256: sha256("x") }, "give exactly one of content or content_sha256"],
      [{ producer: "p", content_sha256: "XYZ" }, "content_sha256"],
      [{ producer: "p", content: "x", produced_at: "yesterday" }, "produced_at"],
    ] as [unknown, string][]) {
      const res = await fetch(`${srv.url}/v1/services/attestation.single-use-seal`, { method: "POST", headers: json, body: JSON.stringify(body) });
      expect(res.status, field).to.equal(400);
      expect(res.headers.get("payment-required")).to.equal(null);
      expect(JSON.stringify(await res.json()), field).to.contain(field);
    }
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });
});

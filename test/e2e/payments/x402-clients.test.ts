import { expect } from "chai";
import { createHash } from "node:crypto";
import { createWalletClient, http, publicActions, type Hex } from "viem";
import { baseSepolia } from "viem/chains";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment as wrapFetchV1, decodeXPaymentResponse } from "x402-fetch";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// Off-the-shelf x402 clients, on their default settings, pay the dev chain (a Base Sepolia mirror).

import { pollResult } from "../../fixtures/results.js";

const json = { "content-type": "application/json" };

function expectHashRule(deliverable: Record<string, unknown>, sha: string) {
  const text = typeof deliverable.content_markdown === "string" ? deliverable.content_markdown : canonicalJson(deliverable);
  expect(createHash("sha256").update(text, "utf8").digest("hex")).to.equal(sha);
}

describe("x402 clients pay on the dev chain", function () {
  this.timeout(60_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  it("@x402/fetch 2.x pays a sync SKU: deliverable, trust envelope, receipt, exact balance moves, proof matches the chain", async () => {
    const buyer = await newBuyer(srv);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const [before, treasuryBefore] = await Promise.all([usdcBalance(srv, buyer.address), usdcBalance(srv, srv.chain.treasury)]);
    const res = await pay(`${srv.url}/v1/services/agent.trust-badge`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.status).to.equal("delivered");
    expect(body.deliverable).to.include({ subject: buyer.address, badge: "none", score: 0, settled_payments: 0 });
    expect(body.powered_by).to.be.a("string").and.not.equal("");
    expect(body.svc_trust.content_scanned).to.equal(true);
    expectHashRule(body.deliverable, body.svc_trust.content_sha256);
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response")!);
    expect(receipt.success).to.equal(true);
    expect(receipt.transaction).to.equal(body.payment_proof.tx_hash);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    expect(await usdcBalance(srv, srv.chain.treasury)).to.equal(treasuryBefore + 10_000n);

    const chainReceipt = await srv.chain.publicClient.getTransactionReceipt({ hash: body.payment_proof.tx_hash as Hex });
    expect(chainReceipt.status).to.equal("success");
    const proof = (await (await fetch(`${srv.url}/v1/proofs/settlement/${body.payment_proof.tx_hash}`)).json()) as Record<string, any>;
    expect(proof.proof).to.include({ kind: 30120, settlement_ref: body.payment_proof.tx_hash, task_class: "agent" });
    expect(proof.proof.receipt).to.deep.equal({ svc_fee_bps: 2000, svc_fee_usd: 0.002, provider_payout_usd: 0.008 });
    expect(proof.proof.signature_disclosure).to.contain("development key");
    expect(JSON.stringify(proof)).to.not.match(/cost_usd|net_usd/);
    await expectLedgerConsistent(srv.ds);
  });

  it("@x402/fetch 2.x pays an async SKU, then the result is polled until delivered", async () => {
    const buyer = await newBuyer(srv);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const before = await usdcBalance(srv, buyer.address);
    const res = await pay(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
    expect(res.status).to.equal(200);
    const accepted = (await res.json()) as Record<string, any>;
    expect(accepted.status).to.equal("pending");
    expect(accepted.job_id).to.match(/^job_/);
    expect(accepted.payment_proof.tx_hash).to.match(/^0x[0-9a-f]{64}$/);
    const done = await pollResult(srv, accepted.job_id);
    expect(done.status).to.equal("delivered");
    expect(done.deliverable.subject).to.equal(buyer.address);
    expect(done.deliverable.settlement_history.settled_payments).to.equal(1); // its own paid call
    expectHashRule(done.deliverable, done.svc_trust.content_sha256);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 250_000n);
    await expectLedgerConsistent(srv.ds);
  });

  it("x402-fetch 1.x pays a sync SKU through the v1 body and X-PAYMENT", async () => {
    const buyer = await newBuyer(srv);
    const wallet = createWalletClient({ account: buyer.account, chain: baseSepolia, transport: http(srv.chain.rpcUrl) }).extend(publicActions);
    const pay = wrapFetchV1(fetch, wallet as never);
    const before = await usdcBalance(srv, buyer.address);
    const res = await pay(`${srv.url}/v1/services/attestation.single-use-seal`, { method: "POST", headers: json, body: JSON.stringify({ producer: "agent-x", content: "hello" }) });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.deliverable.content_sha256).to.equal(createHash("sha256").update("hello").digest("hex"));
    expect(body.deliverable.state).to.equal("unused");
    const receipt = decodeXPaymentResponse(res.headers.get("x-payment-response")!);
    expect(receipt.success).to.equal(true);
    expect(receipt.transaction).to.equal(body.payment_proof.tx_hash);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 50_000n);
  });

  it("lists settlement proofs newest first, paged, with the limit clamped and checked", async () => {
    const page1 = (await (await fetch(`${srv.url}/v1/proofs/settlements?limit=2`)).json()) as { proofs: { sequence: number; kind: number }[]; next_page_token: string };
    expect(page1.proofs).to.have.length(2);
    expect(page1.proofs[0]!.sequence).to.be.greaterThan(page1.proofs[1]!.sequence);
    expect(page1.proofs.every((p) => p.kind === 30120)).to.equal(true);
    const page2 = (await (await fetch(`${srv.url}/v1/proofs/settlements?limit=2&page_token=${page1.next_page_token}`)).json()) as { proofs: { sequence: number }[] };
    expect(page2.proofs[0]!.sequence).to.be.lessThan(page1.proofs[1]!.sequence);
    expect((await fetch(`${srv.url}/v1/proofs/settlements?limit=100000`)).status).to.equal(200);
    expect((await fetch(`${srv.url}/v1/proofs/settlements?limit=-1`)).status).to.equal(400);
    expect((await fetch(`${srv.url}/v1/proofs/settlements?page_token=bogus`)).status).to.equal(400);
    expect((await fetch(`${srv.url}/v1/proofs/settlement/0x${"0".repeat(64)}`)).status).to.equal(404);
  });

  it("reports the dev chain in /v1/health", async () => {
    const health = (await (await fetch(`${srv.url}/v1/health`)).json()) as Record<string, any>;
    expect(health.chain).to.deep.equal({ network: "eip155:84532", asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", pay_to: srv.chain.treasury, rpc_url: srv.chain.rpcUrl, dev_chain: true });
    expect(health.checks.map((c: { name: string; ready: boolean }) => [c.name, c.ready])).to.deep.equal([["database", true], ["chain", true], ["facilitator", true]]);
  });

  it("x402-fetch 1.x pays an async SKU once its cap is raised to the price, as a buyer would", async () => {
    const buyer = await newBuyer(srv);
    const wallet = createWalletClient({ account: buyer.account, chain: baseSepolia, transport: http(srv.chain.rpcUrl) }).extend(publicActions);
    const pay = wrapFetchV1(fetch, wallet as never, 250_000n);
    const res = await pay(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
    expect(res.status).to.equal(200);
    const accepted = (await res.json()) as Record<string, any>;
    const done = await pollResult(srv, accepted.job_id);
    expect(done.status).to.equal("delivered");
    await expectLedgerConsistent(srv.ds);
  });
});

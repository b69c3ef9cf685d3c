import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { SealEntity } from "../../../src/skus/seal.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, signV2Payment, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// Payments interrupted mid-settlement are resolved against the chain when a server starts.

const json = { "content-type": "application/json" };
const API_KEY = "test-facilitator-api-key-0123456789";

/** Relays to a real facilitator, but answers HTTP 500 to /settle: either before or after relaying it. */
async function flakySettle(realUrl: string, relaySettle: boolean) {
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.url === "/settle") {
      if (relaySettle) await fetch(`${realUrl}/settle`, { method: "POST", headers: { ...json, authorization: req.headers.authorization ?? "" }, body });
      return void res.writeHead(500, json).end('{"error":"lost the answer"}');
    }
    const real = await fetch(`${realUrl}${req.url}`, { method: req.method, headers: { ...json, authorization: req.headers.authorization ?? "" }, body: req.method === "POST" ? body : undefined });
    res.writeHead(real.status, json).end(await real.text());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("reconciliation of interrupted settlements", function () {
  this.timeout(60_000);
  let settler: TestServer;
  before(async () => {
    settler = await startTestServer({ FACILITATOR_API_KEY: API_KEY });
  });
  after(() => settler.close());

  const seller = (facilitatorUrl: string) =>
    startTestServer({
      CHAIN_RPC_URL: settler.chain.rpcUrl,
      CHAIN_NETWORK: "base-sepolia",
      TREASURY_ADDRESS: devAccounts().treasury.address,
      FACILITATOR_URL: facilitatorUrl,
      FACILITATOR_AUTH_TOKEN: API_KEY,
      SETTLE_TIMEOUT_MS: "1000",
      WORKER_CONCURRENCY: "0",
    });

  /** An authorization valid for `validForS` seconds, sent through a facilitator that loses the settle answer. */
  async function interruptedPayment(relaySettle: boolean, validForS = 300, call?: { sku: string; body: unknown; whileDown?: (s: TestServer, payer: string) => Promise<void> }) {
    const flaky = await flakySettle(`${settler.url}/facilitator`, relaySettle);
    const first = await seller(flaky.url);
    const buyer = await newBuyer(settler);
    const before = await usdcBalance(settler, buyer.address);
    const sku = call?.sku ?? "agent.trust-badge";
    const body = call?.body ?? { subject: buyer.address };
    const accepted = (await challengeOf(first, sku, body)).accepts[0];
    const header = b64(await signV2Payment(buyer, accepted, { validBefore: BigInt(Math.floor(Date.now() / 1000) + validForS) }));
    const res = await fetch(`${first.url}/v1/services/${sku}`, { method: "POST", headers: { ...json, "payment-signature": header }, body: JSON.stringify(body) });
    expect(res.status).to.equal(503);
    await call?.whileDown?.(first, buyer.address);
    await first.close(); // the process "dies" with the payment in `settling`
    await flaky.close();
    await new Promise((r) => setTimeout(r, 1_100)); // older than SETTLE_TIMEOUT_MS: stale
    return { buyer, before, header, accepted };
  }

  it("a settlement that was mined but whose answer was lost is finalized at start, and a replay gets that result", async () => {
    const { buyer, before, header } = await interruptedPayment(true);
    expect(await usdcBalance(settler, buyer.address)).to.equal(before - 10_000n); // it did settle on-chain
    const restarted = await seller(`${settler.url}/facilitator`);
    try {
      const row = await restarted.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(row.state).to.equal("settled");
      expect(row.txHash).to.match(/^0x[0-9a-f]{64}$/);
      expect(await restarted.ds.manager.countBy(ProofRecordEntity, { settlementRef: row.txHash! })).to.equal(1);
      const replay = await fetch(`${restarted.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { ...json, "payment-signature": header }, body: JSON.stringify({ subject: buyer.address }) });
      expect(replay.status).to.equal(200);
      expect(((await replay.json()) as Record<string, any>).payment_proof.tx_hash).to.equal(row.txHash);
      expect(await usdcBalance(settler, buyer.address)).to.equal(before - 10_000n); // charged once
      await expectLedgerConsistent(restarted.ds);
    } finally {
      await restarted.close();
    }
  });

  it("a seal whose settlement was mined but not recorded exists only once reconciliation records the settlement", async () => {
    const body = { producer: "p", content: "sealed across a crash" };
    const { buyer, before, header } = await interruptedPayment(true, 300, {
      sku: "attestation.single-use-seal",
      body,
      whileDown: async (s, payer) => {
        // Settled on-chain, not recorded: the seal and its proof record are not written yet.
        const row = await s.ds.manager.findOneByOrFail(X402PaymentEntity, { skuId: "attestation.single-use-seal", state: "settling", payer });
        const stored = JSON.parse(row.responseJson!).deliverable;
        expect(await s.ds.manager.countBy(SealEntity, { sealId: stored.seal_id })).to.equal(0);
        expect(await s.ds.manager.countBy(ProofRecordEntity, { proofId: stored.proof_id })).to.equal(0);
      },
    });
    expect(await usdcBalance(settler, buyer.address)).to.equal(before - 50_000n);
    const restarted = await seller(`${settler.url}/facilitator`);
    try {
      const replay = await fetch(`${restarted.url}/v1/services/attestation.single-use-seal`, { method: "POST", headers: { ...json, "payment-signature": header }, body: JSON.stringify(body) });
      expect(replay.status).to.equal(200);
      const d = ((await replay.json()) as Record<string, any>).deliverable;
      expect(await restarted.ds.manager.countBy(SealEntity, { sealId: d.seal_id })).to.equal(1);
      expect(await restarted.ds.manager.countBy(ProofRecordEntity, { proofId: d.proof_id, settlementRef: d.seal_id })).to.equal(1);
      const verified = await fetch(`${restarted.url}/v1/seals/${d.seal_id}/verify`, { method: "POST", headers: json, body: JSON.stringify({ content: body.content }) });
      expect(await verified.json()).to.include({ matches: true, state: "unused", consumed: true });
      await expectLedgerConsistent(restarted.ds);
    } finally {
      await restarted.close();
    }
  });

  it("a settlement that never reached the chain stays open while its authorization is valid: a retry is told it is in progress", async () => {
    const { buyer, before, header } = await interruptedPayment(false);
    expect(await usdcBalance(settler, buyer.address)).to.equal(before);
    const restarted = await seller(`${settler.url}/facilitator`);
    try {
      // Still executable: reconciliation must not declare it failed (it could yet be mined).
      expect((await restarted.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address })).state).to.equal("settling");
      const retry = await fetch(`${restarted.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { ...json, "payment-signature": header }, body: JSON.stringify({ subject: buyer.address }) });
      expect(retry.status).to.equal(409);
      expect(await retry.json()).to.have.nested.property("error.code", "payment_in_progress");
      expect(await usdcBalance(settler, buyer.address)).to.equal(before);
    } finally {
      await restarted.close();
    }
  });

  it("a settlement that never reached the chain is marked failed once its authorization expired; nothing is charged", async function () {
    this.timeout(90_000);
    const { buyer, before } = await interruptedPayment(false, 8);
    await new Promise((r) => setTimeout(r, 8_000)); // past validBefore: it can never execute now
    const restarted = await seller(`${settler.url}/facilitator`);
    try {
      const row = await restarted.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(row.state).to.equal("failed");
      expect(row.errorReason).to.equal("interrupted");
      expect(await usdcBalance(settler, buyer.address)).to.equal(before);
      await expectLedgerConsistent(restarted.ds);
    } finally {
      await restarted.close();
    }
  });
});

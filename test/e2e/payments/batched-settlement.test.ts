import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Hex } from "viem";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { verifyProof } from "../../../src/proof/verify-proof.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// Batched settlement (SETTLE_BATCH_WINDOW_MS): parallel paid calls share SettlementBatcher
// transactions, each payment keeps its own record (tx hash + index) that `svc verify` checks on-chain,
// one bad authorization fails alone and uncharged, window 0 keeps one transaction per payment, and a
// batched settlement whose answer was lost is reconciled at start.

const SKU = "agent.trust-badge";
const PRICE = 10_000n;
const json = { "content-type": "application/json" };
const API_KEY = "test-facilitator-api-key-0123456789";

type Body = Record<string, any>;

async function pay(srv: TestServer, buyer: Buyer, accepted: Body) {
  const res = await paidPost(srv, SKU, { subject: buyer.address }, b64(await signV2Payment(buyer, accepted)));
  const receipt = res.headers.get("payment-response");
  return { status: res.status, body: (await res.json()) as Body, receipt: receipt ? (JSON.parse(Buffer.from(receipt, "base64").toString()) as Body) : undefined };
}

async function verifySettlement(srv: TestServer, ref: string) {
  const res = await fetch(`${srv.url}/v1/proofs/settlement/${ref}`);
  expect(res.status, `proof ${ref}`).to.equal(200);
  const proof = ((await res.json()) as Body).proof;
  const keys = (await (await fetch(`${srv.url}/v1/proofs/keys`)).json()) as Body;
  return { proof, checks: await verifyProof(proof, keys.ed25519_public_keys[0], undefined, srv.chain.publicClient), keys };
}

describe("batched settlement", function () {
  this.timeout(120_000);

  describe("with a batching window", () => {
    let srv: TestServer;
    // A long window with a size cap: a batch is sent as soon as it holds BATCH items (no timing assumption).
    const BATCH = 6;
    before(async () => {
      srv = await startTestServer({ SETTLE_BATCH_WINDOW_MS: "1500", SETTLE_BATCH_MAX: String(BATCH), SETTLE_BATCH_EAGER: "false", PAYER_RATE_LIMIT_PER_MINUTE: "0" });
    });
    after(() => srv.close());

    it("settles parallel paid calls in fewer transactions than payments, each with its own verifiable (tx hash, index)", async () => {
      const buyers = await Promise.all(Array.from({ length: BATCH }, () => newBuyer(srv)));
      const accepted = (await challengeOf(srv, SKU, { subject: buyers[0]!.address })).accepts[0];
      const before = await Promise.all(buyers.map((b) => usdcBalance(srv, b.address)));
      const results = await Promise.all(buyers.map((b) => pay(srv, b, accepted)));
      expect(results.map((r) => r.status)).to.deep.equal(Array(BATCH).fill(200));

      const txs = new Set(results.map((r) => r.body.payment_proof.tx_hash as string));
      expect(txs.size).to.be.lessThan(BATCH);
      const records = results.map((r) => `${r.body.payment_proof.tx_hash}:${r.body.payment_proof.batch_index}`);
      expect(new Set(records).size).to.equal(BATCH); // each payment its own settlement record
      for (const r of results) {
        expect(r.body.payment_proof.batch_index).to.be.a("number");
        expect(r.receipt).to.include({ success: true, transaction: r.body.payment_proof.tx_hash });
        expect(r.receipt!.extra).to.deep.equal({ batchIndex: r.body.payment_proof.batch_index });
        expect(r.body.payment_proof.proof_url).to.equal(`/v1/proofs/settlement/${r.body.payment_proof.tx_hash}:${r.body.payment_proof.batch_index}`);
      }
      // The batch went through the batcher contract, once for all of its items.
      const tx = await srv.chain.publicClient.getTransaction({ hash: [...txs][0] as Hex });
      expect(tx.to!.toLowerCase()).to.equal(srv.config.settlementBatcherAddress!.toLowerCase());

      // Charged exactly once each; the database holds (tx, index) for each payment.
      for (const [i, b] of buyers.entries()) expect(await usdcBalance(srv, b.address)).to.equal(before[i]! - PRICE);
      for (const [i, b] of buyers.entries()) {
        const row = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: b.address });
        expect(row).to.include({ state: "settled", txHash: results[i]!.body.payment_proof.tx_hash, batchIndex: results[i]!.body.payment_proof.batch_index });
      }

      // `svc verify` of each payment's proof finds THAT payment's authorization at its index.
      for (const ref of records) {
        const { checks } = await verifySettlement(srv, ref);
        expect(checks.find((c) => c.name === "settlement"), ref).to.include({ outcome: "pass" });
      }
      // A proof that claims another item of the same transaction does not verify.
      const { proof, keys } = await verifySettlement(srv, records[0]!);
      const [hash, index] = records[0]!.split(":");
      const forged = { ...proof, settlement_ref: `${hash}:${(Number(index) + 1) % BATCH}` };
      const forgedChecks = await verifyProof(forged, keys.ed25519_public_keys[0], undefined, srv.chain.publicClient);
      expect(forgedChecks.find((c) => c.name === "settlement")).to.include({ outcome: "fail" });
      await expectLedgerConsistent(srv.ds);
    });

    it("fails one authorization that cannot execute alone, uncharged with a clear reason, while the others settle and deliver", async () => {
      // The poor buyer can pay one call, not two: both authorizations pass verification (each alone is
      // covered) and meet in one batch, where the second transfer reverts on-chain.
      const poor = await newBuyer(srv, 0.015);
      const others = await Promise.all(Array.from({ length: BATCH - 2 }, () => newBuyer(srv)));
      const accepted = (await challengeOf(srv, SKU, { subject: poor.address })).accepts[0];
      const results = await Promise.all([pay(srv, poor, accepted), pay(srv, poor, accepted), ...others.map((b) => pay(srv, b, accepted))]);

      const poorResults = results.slice(0, 2);
      expect(poorResults.map((r) => r.status).sort()).to.deep.equal([200, 402]);
      const refused = poorResults.find((r) => r.status === 402)!;
      const ok = poorResults.find((r) => r.status === 200)!;
      expect(refused.body.code).to.equal("payment_failed");
      expect(refused.body.message).to.contain("invalid_exact_evm_insufficient_balance");
      expect(refused.receipt).to.include({ success: false, errorReason: "invalid_exact_evm_insufficient_balance" });
      expect(refused.receipt!.errorMessage).to.contain("transfer amount exceeds balance");
      // It was in the same transaction as the payments that settled.
      expect(refused.receipt!.transaction).to.equal(ok.body.payment_proof.tx_hash);
      expect(await usdcBalance(srv, poor.address)).to.equal(15_000n - PRICE); // charged once, for what was delivered

      for (const r of results.slice(2)) {
        expect(r.status).to.equal(200);
        expect(r.body.deliverable).to.be.an("object");
        expect(r.body.payment_proof.tx_hash).to.equal(ok.body.payment_proof.tx_hash);
      }
      const rows = await srv.ds.manager.findBy(X402PaymentEntity, { payer: poor.address });
      expect(rows.map((r) => r.state).sort()).to.deep.equal(["failed", "settled"]);
      expect(rows.find((r) => r.state === "failed")!.errorReason).to.equal("invalid_exact_evm_insufficient_balance");
      expect(await srv.ds.manager.countBy(ProofRecordEntity, { kind: 30120, taskClass: "agent", settlementRef: `${ok.body.payment_proof.tx_hash}:${rows.find((r) => r.state === "failed")!.batchIndex}` })).to.equal(0);
      await expectLedgerConsistent(srv.ds);
    });
  });

  describe("with the window at 0", () => {
    let srv: TestServer;
    before(async () => {
      srv = await startTestServer({ SETTLE_BATCH_WINDOW_MS: "0", PAYER_RATE_LIMIT_PER_MINUTE: "0" });
    });
    after(() => srv.close());

    it("keeps one transaction per payment, sent to the token, with no batch index", async () => {
      const buyers = await Promise.all(Array.from({ length: 5 }, () => newBuyer(srv)));
      const accepted = (await challengeOf(srv, SKU, { subject: buyers[0]!.address })).accepts[0];
      const results = await Promise.all(buyers.map((b) => pay(srv, b, accepted)));
      expect(results.map((r) => r.status)).to.deep.equal(Array(5).fill(200));
      const txs = new Set(results.map((r) => r.body.payment_proof.tx_hash as Hex));
      expect(txs.size).to.equal(5);
      for (const r of results) {
        expect(r.body.payment_proof).to.not.have.property("batch_index");
        expect(r.receipt).to.not.have.property("extra");
        const tx = await srv.chain.publicClient.getTransaction({ hash: r.body.payment_proof.tx_hash });
        expect(tx.to!.toLowerCase()).to.equal(srv.chain.network.usdcAddress.toLowerCase());
        const { checks } = await verifySettlement(srv, r.body.payment_proof.tx_hash);
        expect(checks.find((c) => c.name === "settlement")).to.include({ outcome: "pass" });
      }
    });
  });

  describe("reconciliation", () => {
    let settler: TestServer;
    before(async () => {
      // The facilitator batches pairs: both payments below land in one batch transaction.
      settler = await startTestServer({ FACILITATOR_API_KEY: API_KEY, SETTLE_BATCH_WINDOW_MS: "3000", SETTLE_BATCH_MAX: "2", SETTLE_BATCH_EAGER: "false" });
    });
    after(() => settler.close());

    it("finalizes batched payments whose settlement was mined but whose answer was lost, each with its own index", async () => {
      // A facilitator proxy that relays /settle but answers 500: the seller crashes with both payments `settling`.
      const proxy = http.createServer(async (req, res) => {
        let body = "";
        for await (const chunk of req) body += chunk;
        const real = await fetch(`${settler.url}/facilitator${req.url}`, { method: req.method, headers: { ...json, authorization: req.headers.authorization ?? "" }, body: req.method === "POST" ? body : undefined });
        if (req.url === "/settle") return void res.writeHead(500, json).end('{"error":"lost the answer"}');
        res.writeHead(real.status, json).end(await real.text());
      });
      await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
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
      const first = await seller(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
      const buyers = await Promise.all([newBuyer(settler), newBuyer(settler)]);
      const accepted = (await challengeOf(first, SKU, { subject: buyers[0]!.address })).accepts[0];
      const lost = await Promise.all(buyers.map((b) => pay(first, b, accepted)));
      expect(lost.map((r) => r.status)).to.deep.equal([503, 503]);
      await first.close(); // the process "dies" with both payments in `settling`
      await new Promise<void>((r) => proxy.close(() => r()));
      await new Promise((r) => setTimeout(r, 1_100)); // older than SETTLE_TIMEOUT_MS: stale

      const restarted = await seller(`${settler.url}/facilitator`);
      try {
        const rows = await Promise.all(buyers.map((b) => restarted.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: b.address })));
        expect(rows.map((r) => r.state)).to.deep.equal(["settled", "settled"]);
        expect(rows[0]!.txHash).to.match(/^0x[0-9a-f]{64}$/);
        expect(rows[1]!.txHash).to.equal(rows[0]!.txHash); // one batch transaction
        expect(rows.map((r) => r.batchIndex).sort()).to.deep.equal([0, 1]);
        for (const row of rows) {
          const { checks } = await verifySettlement(restarted, `${row.txHash}:${row.batchIndex}`);
          expect(checks.find((c) => c.name === "settlement")).to.include({ outcome: "pass" });
        }
        for (const b of buyers) expect(await usdcBalance(settler, b.address)).to.equal(5_000_000n - PRICE); // charged once
        await expectLedgerConsistent(restarted.ds);
      } finally {
        await restarted.close();
      }
    });
  });
});

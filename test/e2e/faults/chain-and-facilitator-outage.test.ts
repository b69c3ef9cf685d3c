import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { challenge, joinChainEnv, newRigBuyer, paidCall, signPayment, startRigChain, startRpcCutter, type RigChain, type RpcCutter } from "../../fixtures/fault-rig.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// The chain RPC goes away (a relay in front of it is cut) and a remote facilitator answers too late.
// Challenges need no RPC and are still served; a paid call that cannot reach the chain is refused
// with 503 and charges nothing; a settlement that was in flight when the RPC went away is reconciled
// when it comes back (delivered exactly once); a facilitator that settles but answers after the
// timeout is reconciled against the chain, never charged twice.

const SKU = "agent.trust-badge";
const json = { "content-type": "application/json" };
const API_KEY = "fault-test-facilitator-key-0123456789";

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("chain RPC and facilitator outages", function () {
  this.timeout(180_000);
  let chain: RigChain;
  let cutter: RpcCutter;

  before(async () => {
    chain = await startRigChain();
    cutter = await startRpcCutter(chain.rpcUrl);
  });
  after(async () => {
    await cutter?.close();
    await chain?.stop();
  });

  describe("chain RPC down", () => {
    let srv: TestServer;
    before(async () => {
      // SETTLE_TIMEOUT_MS 2 s: the background reconciler runs every second.
      srv = await startTestServer({ ...joinChainEnv(cutter.url, chain.facilitatorKey), SETTLE_TIMEOUT_MS: "2000", WORKER_CONCURRENCY: "0" });
    });
    after(async () => {
      cutter.restore();
      await srv?.close();
    });

    it("challenges are still served, a paid call is refused with 503 and not charged, and the same payment is served once the RPC is back", async () => {
      const buyer = newRigBuyer();
      await chain.fund(buyer.address, 1_000_000n);
      const body = { subject: buyer.address };
      const before = await chain.balance(buyer.address);
      cutter.cut();
      try {
        const accepted = (await challenge(srv.url, SKU, body)).accepts[0];
        expect(accepted.amount).to.equal("10000");
        const pay = await signPayment(buyer, accepted);
        const refused = await paidCall(srv.url, SKU, body, pay.header);
        expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
        expect(refused.code).to.equal("facilitator_unavailable");
        expect(refused.body!.error.message).to.contain("nothing was charged");
        expect((await fetch(`${srv.url}/v1/health/ready`)).status).to.equal(503);
        expect(await chain.balance(buyer.address)).to.equal(before);
        expect(await chain.authorizationUsed(buyer.address, pay.nonce)).to.equal(false);

        cutter.restore();
        const served = await paidCall(srv.url, SKU, body, pay.header);
        expect(served.status, JSON.stringify(served.body)).to.equal(200);
        expect(await chain.balance(buyer.address)).to.equal(before - 10_000n);
      } finally {
        cutter.restore();
      }
      await expectLedgerConsistent(srv.ds);
    });

    it("a settlement broadcast just before the RPC went away is reconciled when it comes back: delivered once, charged once", async () => {
      const buyer = newRigBuyer();
      await chain.fund(buyer.address, 1_000_000n);
      const body = { subject: buyer.address };
      const accepted = (await challenge(srv.url, SKU, body)).accepts[0];
      const pay = await signPayment(buyer, accepted);
      const before = await chain.balance(buyer.address);

      const cut = cutter.cutAfter("eth_sendRawTransaction"); // relayed to the chain, the answer is lost
      const lost = await paidCall(srv.url, SKU, body, pay.header);
      await cut;
      expect(lost.status, JSON.stringify(lost.body)).to.equal(503);
      expect(lost.code).to.equal("settlement_unknown");
      // It was mined all the same (read past the cut RPC).
      await until("the settlement mined", async () => (await chain.balance(buyer.address)) === before - 10_000n, 10_000);
      const row = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(row.state).to.equal("settling");

      // While the RPC is down a retry cannot learn the outcome: refused, nothing more charged.
      const early = await paidCall(srv.url, SKU, body, pay.header);
      expect(early.status, JSON.stringify(early.body)).to.be.oneOf([409, 503]);

      cutter.restore();
      // The background reconciler finalizes it without any request.
      await until("reconciled", async () => (await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address })).state === "settled", 30_000);
      const replay = await paidCall(srv.url, SKU, body, pay.header);
      expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
      const settled = await srv.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(replay.body!.payment_proof.tx_hash).to.equal(settled.txHash);
      expect(await chain.balance(buyer.address)).to.equal(before - 10_000n);
      await expectLedgerConsistent(srv.ds);
    });
  });

  describe("facilitator timeout", () => {
    let settler: TestServer;
    let seller: TestServer;
    let slow: { url: string; close(): Promise<void>; settled: number };

    before(async () => {
      // The facilitator: another svc server with the built-in facilitator on the same chain.
      settler = await startTestServer({ ...joinChainEnv(chain.rpcUrl, await chain.gasKey()), FACILITATOR_API_KEY: API_KEY, WORKER_CONCURRENCY: "0" });
      slow = await lateSettleRelay(`${settler.url}/facilitator`, 3_000);
      const { FACILITATOR_PRIVATE_KEY: _none, ...joined } = joinChainEnv(chain.rpcUrl, chain.facilitatorKey);
      seller = await startTestServer({
        ...joined,
        FACILITATOR_URL: slow.url,
        FACILITATOR_AUTH_TOKEN: API_KEY,
        FACILITATOR_TIMEOUT_MS: "1500",
        SETTLE_TIMEOUT_MS: "2000",
        WORKER_CONCURRENCY: "0",
      });
    });
    after(async () => {
      await seller?.close();
      await slow?.close();
      await settler?.close();
    });

    it("a facilitator that settles but answers after the timeout: 503 settlement_unknown, then reconciled from the chain; charged exactly once", async () => {
      const buyer = newRigBuyer();
      await chain.fund(buyer.address, 1_000_000n);
      const body = { subject: buyer.address };
      const accepted = (await challenge(seller.url, SKU, body)).accepts[0];
      const pay = await signPayment(buyer, accepted);
      const before = await chain.balance(buyer.address);

      const late = await paidCall(seller.url, SKU, body, pay.header);
      expect(late.status, JSON.stringify(late.body)).to.equal(503);
      expect(late.code).to.equal("settlement_unknown");
      await until("the facilitator settled", async () => (await chain.balance(buyer.address)) === before - 10_000n, 10_000);

      // A retry of the same payment is resolved against the chain, not settled again.
      const retried = await paidCall(seller.url, SKU, body, pay.header);
      expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
      const row = await seller.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(row.state).to.equal("settled");
      expect(retried.body!.payment_proof.tx_hash).to.equal(row.txHash);
      const again = await paidCall(seller.url, SKU, body, pay.header);
      expect(again.status).to.equal(200);
      expect(slow.settled).to.equal(1); // the facilitator was asked to settle once
      expect(await chain.balance(buyer.address)).to.equal(before - 10_000n);
      await expectLedgerConsistent(seller.ds);
    });

    it("without a retry, the background reconciler records the late settlement", async () => {
      const buyer = newRigBuyer();
      await chain.fund(buyer.address, 1_000_000n);
      const body = { subject: buyer.address };
      const accepted = (await challenge(seller.url, SKU, body)).accepts[0];
      const pay = await signPayment(buyer, accepted);
      const before = await chain.balance(buyer.address);
      const late = await paidCall(seller.url, SKU, body, pay.header);
      expect(late.code, JSON.stringify(late.body)).to.equal("settlement_unknown");
      await until("reconciled", async () => (await seller.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address })).state === "settled", 30_000);
      expect(await chain.balance(buyer.address)).to.equal(before - 10_000n);
      await expectLedgerConsistent(seller.ds);
    });
  });
});

/** Relays a facilitator; /settle is relayed at once but answered `delayMs` after the real answer. */
async function lateSettleRelay(realUrl: string, delayMs: number) {
  const state = { settled: 0 };
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const headers = { ...json, authorization: req.headers.authorization ?? "" };
    if (req.url === "/settle") state.settled++;
    const real = await fetch(`${realUrl}${req.url}`, { method: req.method, headers, body: req.method === "POST" ? body : undefined });
    const text = await real.text();
    if (req.url === "/settle") await new Promise((r) => setTimeout(r, delayMs));
    if (!res.destroyed) res.writeHead(real.status, json).end(text);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get settled() {
      return state.settled;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, signV2Payment, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

const json = { "content-type": "application/json" };
const API_KEY = "test-facilitator-api-key-0123456789";
const authed = { ...json, authorization: `Bearer ${API_KEY}` };

/** A facilitator endpoint that misbehaves in a chosen way, over real HTTP on loopback (fault injection). */
async function brokenFacilitator(behaviour: "500" | "garbage" | "hang" | "settle-500", verifyVia?: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (behaviour === "settle-500" && req.url === "/verify") {
      const real = await fetch(`${verifyVia}/verify`, { method: "POST", headers: { ...json, authorization: req.headers.authorization ?? "" }, body });
      res.writeHead(real.status, json).end(await real.text());
      return;
    }
    if (behaviour === "hang") return; // never answers
    if (behaviour === "garbage") return void res.writeHead(200, json).end("{not json");
    res.writeHead(500, json).end('{"error":"boom"}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe("facilitators: the built-in x402 API, a remote facilitator, and failing ones", function () {
  this.timeout(60_000);
  let settler: TestServer; // runs the built-in facilitator and the dev chain

  before(async () => {
    settler = await startTestServer({ FACILITATOR_API_KEY: API_KEY });
  });
  after(() => settler.close());

  /** A second server on the same chain that uses `facilitatorUrl` instead of its own key. */
  const remoteServer = (facilitatorUrl: string, extra: Record<string, string> = {}) =>
    startTestServer({
      CHAIN_RPC_URL: settler.chain.rpcUrl,
      CHAIN_NETWORK: "base-sepolia",
      TREASURY_ADDRESS: devAccounts().treasury.address,
      FACILITATOR_URL: facilitatorUrl,
      FACILITATOR_AUTH_TOKEN: API_KEY,
      ...extra,
    });

  it("serves /facilitator/supported with both x402 versions and its signer", async () => {
    const res = (await (await fetch(`${settler.url}/facilitator/supported`)).json()) as Record<string, any>;
    expect(res.kinds).to.deep.include({ x402Version: 2, scheme: "exact", network: "eip155:84532" });
    expect(res.kinds).to.deep.include({ x402Version: 1, scheme: "exact", network: "base-sepolia" });
    expect(res.signers["eip155:*"]).to.deep.equal([devAccounts().facilitator.address]);
  });

  it("verifies a good payment at /facilitator/verify, and refuses to work for another payTo", async () => {
    const buyer = await newBuyer(settler);
    const accepted = (await challengeOf(settler, "agent.trust-badge", { subject: buyer.address })).accepts[0];
    const paymentPayload = await signV2Payment(buyer, accepted);
    const request = JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: accepted });
    const anonymous = await fetch(`${settler.url}/facilitator/verify`, { method: "POST", headers: json, body: request });
    expect(anonymous.status).to.equal(401);
    const wrongKey = await fetch(`${settler.url}/facilitator/settle`, { method: "POST", headers: { ...json, authorization: "Bearer not-the-key-at-all-0000" }, body: request });
    expect(wrongKey.status).to.equal(401);
    const ok = (await (await fetch(`${settler.url}/facilitator/verify`, { method: "POST", headers: authed, body: request })).json()) as Record<string, any>;
    expect(ok).to.include({ isValid: true, payer: buyer.address });
    const elsewhere = { ...accepted, payTo: buyer.address };
    const refused = (await (await fetch(`${settler.url}/facilitator/settle`, { method: "POST", headers: authed, body: JSON.stringify({ x402Version: 2, paymentPayload: await signV2Payment(buyer, elsewhere), paymentRequirements: elsewhere }) })).json()) as Record<string, any>;
    expect(refused).to.include({ success: false, errorReason: "invalid_payment_requirements" });
  });

  it("keeps verify and settle closed when no API key is configured", async () => {
    const closed = await startTestServer();
    try {
      const res = await fetch(`${closed.url}/facilitator/settle`, { method: "POST", headers: json, body: "{}" });
      expect(res.status).to.equal(403);
      expect(await res.json()).to.have.nested.property("error.code", "facilitator_api_closed");
      expect((await fetch(`${closed.url}/facilitator/supported`)).status).to.equal(200);
    } finally {
      await closed.close();
    }
  });

  it("answers malformed facilitator requests with a reason, never a 500", async () => {
    const bodies = [
      { x402Version: 2, paymentPayload: { x402Version: 2 }, paymentRequirements: { scheme: "exact", payTo: devAccounts().treasury.address } },
      { x402Version: 2, paymentPayload: { x402Version: 2, payload: { signature: "0x00", authorization: { from: "0x1" } } }, paymentRequirements: { scheme: "exact", amount: "abc", payTo: devAccounts().treasury.address } },
    ];
    for (const body of bodies) {
      const res = await fetch(`${settler.url}/facilitator/verify`, { method: "POST", headers: authed, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).to.be.lessThan(500);
    }
  });

  it("a server using a remote facilitator (over HTTP) sells a call that settles on-chain", async () => {
    const seller = await remoteServer(`${settler.url}/facilitator`);
    try {
      const buyer = await newBuyer(settler);
      const before = await usdcBalance(settler, buyer.address);
      const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
      const res = await pay(`${seller.url}/v1/services/agent.trust-badge`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as Record<string, any>;
      const receipt = await settler.chain.publicClient.getTransactionReceipt({ hash: body.payment_proof.tx_hash });
      expect(receipt.status).to.equal("success");
      expect(await usdcBalance(settler, buyer.address)).to.equal(before - 10_000n);
      expect((await fetch(`${seller.url}/v1/proofs/settlement/${body.payment_proof.tx_hash}`)).status).to.equal(200);
      await expectLedgerConsistent(seller.ds);
    } finally {
      await seller.close();
    }
  });

  for (const behaviour of ["500", "garbage", "hang"] as const) {
    it(`a remote facilitator that answers ${behaviour === "hang" ? "nothing (timeout)" : behaviour === "500" ? "HTTP 500" : "malformed JSON"}: 503, nothing charged`, async () => {
      const broken = await brokenFacilitator(behaviour);
      const seller = await remoteServer(broken.url, { FACILITATOR_TIMEOUT_MS: "500" });
      try {
        const buyer = await newBuyer(settler);
        const before = await usdcBalance(settler, buyer.address);
        const accepted = (await challengeOf(seller, "agent.trust-badge", { subject: buyer.address })).accepts[0];
        const res = await fetch(`${seller.url}/v1/services/agent.trust-badge`, {
          method: "POST",
          headers: { ...json, "payment-signature": b64(await signV2Payment(buyer, accepted)) },
          body: JSON.stringify({ subject: buyer.address }),
        });
        expect(res.status).to.equal(503);
        expect(await res.json()).to.have.nested.property("error.code", "facilitator_unavailable");
        expect(await usdcBalance(settler, buyer.address)).to.equal(before);
      } finally {
        await seller.close();
        await broken.close();
      }
    });
  }

  it("a settlement whose outcome is unknown is not charged twice: the payment waits for reconciliation", async () => {
    const broken = await brokenFacilitator("settle-500", `${settler.url}/facilitator`);
    const seller = await remoteServer(broken.url, { FACILITATOR_TIMEOUT_MS: "2000" });
    try {
      const buyer = await newBuyer(settler);
      const before = await usdcBalance(settler, buyer.address);
      const accepted = (await challengeOf(seller, "agent.trust-badge", { subject: buyer.address })).accepts[0];
      const header = b64(await signV2Payment(buyer, accepted));
      const send = () => fetch(`${seller.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { ...json, "payment-signature": header }, body: JSON.stringify({ subject: buyer.address }) });
      const first = await send();
      expect(first.status).to.equal(503);
      expect(await first.json()).to.have.nested.property("error.code", "settlement_unknown");
      const row = await seller.ds.manager.findOneByOrFail(X402PaymentEntity, { payer: buyer.address });
      expect(row.state).to.equal("settling");
      expect(await usdcBalance(settler, buyer.address)).to.equal(before);
    } finally {
      await seller.close();
      await broken.close();
    }
  });
});

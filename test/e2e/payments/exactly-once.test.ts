import { expect } from "chai";
import type { Hex } from "viem";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// A signed payment runs the service once and settles once, however often and however concurrently
// it is sent; replays get the stored response with the same transaction.

describe("exactly-once settlement", function () {
  this.timeout(120_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ PAYER_RATE_LIMIT_PER_MINUTE: "0" }); // floods from one payer on purpose: the rate limit is tested elsewhere
  });
  after(() => srv.close());

  const body = (subject: string) => ({ subject });

  it("returns the stored response with the same tx_hash when a settled payment is replayed", async () => {
    const buyer = await newBuyer(srv);
    const ch = await challengeOf(srv, "agent.trust-badge", body(buyer.address));
    const header = b64(await signV2Payment(buyer, ch.accepts[0]));
    const before = await usdcBalance(srv, buyer.address);
    const first = await paidPost(srv, "agent.trust-badge", body(buyer.address), header);
    expect(first.status).to.equal(200);
    const firstBody = (await first.json()) as Record<string, any>;
    const again = await paidPost(srv, "agent.trust-badge", body(buyer.address), header);
    expect(again.status).to.equal(200);
    const againBody = (await again.json()) as Record<string, any>;
    expect(againBody).to.deep.equal(firstBody);
    expect(again.headers.get("payment-response")).to.be.a("string");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
  });

  it("runs and settles once when the same payment is sent 50 times concurrently", async () => {
    const buyer = await newBuyer(srv);
    const ch = await challengeOf(srv, "attestation.single-use-seal", { producer: "p", content: "x" });
    const header = b64(await signV2Payment(buyer, ch.accepts[0]));
    const before = await usdcBalance(srv, buyer.address);
    const responses = await Promise.all(Array.from({ length: 50 }, () => paidPost(srv, "attestation.single-use-seal", { producer: "p", content: "x" }, header)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Record<string, any>[];
    expect(responses.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    const txs = new Set(bodies.map((b) => b.payment_proof.tx_hash));
    const seals = new Set(bodies.map((b) => b.deliverable.seal_id));
    expect(txs.size).to.equal(1);
    expect(seals.size).to.equal(1); // the engine ran once
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 50_000n);
    const rows = await srv.ds.manager.findBy(X402PaymentEntity, { payer: buyer.address });
    expect(rows.map((r) => r.state)).to.deep.equal(["settled"]);
    expect(await srv.ds.manager.countBy(ProofRecordEntity, { settlementRef: [...txs][0] as string })).to.equal(1);
    await expectLedgerConsistent(srv.ds);
  });

  it("refuses a payment made for one SKU when it is presented to another", async () => {
    const buyer = await newBuyer(srv);
    const ch = await challengeOf(srv, "agent.trust-badge", body(buyer.address));
    const header = b64(await signV2Payment(buyer, ch.accepts[0]));
    // reputation.lookup has the same price, but its requirements name another SKU in `extra`.
    const other = await fetch(`${srv.url}/v1/services/attestation.single-use-seal`, {
      method: "POST",
      headers: { "content-type": "application/json", "payment-signature": header },
      body: JSON.stringify({ producer: "p", content: "x" }),
    });
    expect(other.status).to.equal(402);
    expect(((await other.json()) as Record<string, unknown>).code).to.equal("payment_failed");
    const paid = await paidPost(srv, "agent.trust-badge", body(buyer.address), header);
    expect(paid.status).to.equal(200);
  });

  it("settles 200 concurrent paid calls from one payer, each once, with no nonce collision", async function () {
    this.timeout(240_000);
    const buyer = await newBuyer(srv, 10);
    const ch = await challengeOf(srv, "agent.trust-badge", body(buyer.address));
    const headers = await Promise.all(Array.from({ length: 200 }, async () => b64(await signV2Payment(buyer, ch.accepts[0]))));
    const before = await usdcBalance(srv, buyer.address);
    const treasuryBefore = await usdcBalance(srv, srv.chain.treasury);
    const started = Date.now();
    const responses = await Promise.all(headers.map((h) => paidPost(srv, "agent.trust-badge", body(buyer.address), h)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Record<string, any>[];
    const elapsed = Date.now() - started;
    expect(responses.filter((r) => r.status !== 200).map((r, i) => [r.status, bodies[i]])).to.deep.equal([]);
    // Settlements may share batch transactions (SETTLE_BATCH_WINDOW_MS): each has its own (tx hash, index).
    expect(new Set(bodies.map((b) => `${b.payment_proof.tx_hash}:${b.payment_proof.batch_index}`)).size).to.equal(200);
    const txs = new Set(bodies.map((b) => b.payment_proof.tx_hash as Hex));
    const receipts = await Promise.all([...txs].map((hash) => srv.chain.publicClient.getTransactionReceipt({ hash })));
    expect(receipts.every((r) => r.status === "success")).to.equal(true);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 200n * 10_000n);
    expect(await usdcBalance(srv, srv.chain.treasury)).to.equal(treasuryBefore + 200n * 10_000n);
    await expectLedgerConsistent(srv.ds);
    console.log(`      200 concurrent paid calls settled in ${elapsed} ms (${((200 * 1000) / elapsed).toFixed(0)}/s)`);
  });
});

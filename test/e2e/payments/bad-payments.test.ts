import { expect } from "chai";
import { toHex, encodeFunctionData, parseSignature, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { randomBytes } from "node:crypto";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance, type Buyer } from "../../fixtures/buyer.js";

// Every malformed or dishonest payment gets a 4xx with its reason, never a 500 and never a charge.

const SKU = "agent.trust-badge";

describe("bad payments are refused without a charge", function () {
  this.timeout(60_000);
  let srv: TestServer;
  let buyer: Buyer;
  let accepted: Record<string, any>;
  let balance: bigint;
  const body = () => ({ subject: buyer.address });
  const now = () => BigInt(Math.floor(Date.now() / 1000));

  before(async () => {
    srv = await startTestServer();
    buyer = await newBuyer(srv);
    accepted = (await challengeOf(srv, SKU, { subject: buyer.address })).accepts[0];
    balance = await usdcBalance(srv, buyer.address);
  });
  afterEach(async () => {
    expect(await usdcBalance(srv, buyer.address)).to.equal(balance);
    expect(await srv.ds.manager.countBy(X402PaymentEntity, { payer: buyer.address, state: "settled" })).to.equal(0);
  });
  after(() => srv.close());

  async function expectRefused(res: Response, status: number, code: string, error?: string | RegExp) {
    expect(res.status).to.equal(status);
    const json = (await res.json()) as Record<string, any>;
    expect(json.code).to.equal(code);
    expect(json.x402Version).to.equal(1);
    expect(json.accepts).to.have.length(1);
    const v2 = JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString());
    if (error) expect(v2.error).to.match(typeof error === "string" ? new RegExp(error) : error);
    expect(res.headers.get("cache-control")).to.equal("no-store");
  }

  it("malformed base64: 400 payment_invalid", async () => {
    await expectRefused(await paidPost(srv, SKU, body(), "%%% not base64 %%%"), 400, "payment_invalid", "invalid_payload");
  });

  it("base64 of JSON that is not a payment: 400 payment_invalid", async () => {
    await expectRefused(await paidPost(srv, SKU, body(), b64({ hello: "world" })), 400, "payment_invalid", "invalid_x402_version");
    await expectRefused(await paidPost(srv, SKU, body(), b64({ x402Version: 2, payload: { signature: 7 } })), 400, "payment_invalid", "invalid_payload");
  });

  it("a payment header over 16 KB: 400 payment_invalid", async () => {
    await expectRefused(await paidPost(srv, SKU, body(), "A".repeat(20_000)), 400, "payment_invalid", "invalid_payload");
  });

  it("a 1 MB header is refused by the HTTP layer with 431, not a 500", async () => {
    const res = await paidPost(srv, SKU, body(), "A".repeat(1024 * 1024)).catch((e: Error) => e);
    if (res instanceof Error) return; // the server may also close the connection outright
    expect(res.status).to.equal(431);
  });

  it("wrong chain (accepted names Base mainnet): 402, no matching requirements", async () => {
    const p = await signV2Payment(buyer, { ...accepted, network: "eip155:8453" });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "No matching payment requirements");
  });

  it("wrong asset: 402, no matching requirements", async () => {
    const p = await signV2Payment(buyer, { ...accepted, asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "No matching payment requirements");
  });

  it("wrong payTo in the accepted requirements: 402, no matching requirements", async () => {
    const p = await signV2Payment(buyer, { ...accepted, payTo: buyer.address });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "No matching payment requirements");
  });

  it("an authorization paying someone else: 402 recipient mismatch", async () => {
    const p = await signV2Payment(buyer, accepted, { to: buyer.address });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "invalid_exact_evm_recipient_mismatch");
  });

  it("an expired authorization: 402 valid_before", async () => {
    const p = await signV2Payment(buyer, accepted, { validBefore: now() - 10n });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "invalid_exact_evm_payload_authorization_valid_before");
  });

  it("an authorization not valid yet: 402 valid_after", async () => {
    const p = await signV2Payment(buyer, accepted, { validAfter: now() + 3600n });
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "invalid_exact_evm_payload_authorization_valid_after");
  });

  it("a value one unit too low or too high: 402 value mismatch", async () => {
    for (const delta of [-1n, 1n]) {
      const p = await signV2Payment(buyer, accepted, { value: BigInt(accepted.amount) + delta });
      await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "invalid_exact_evm_payload_authorization_value_mismatch");
    }
  });

  it("a signature by another key, or for another chain's domain: 402 invalid signature", async () => {
    const other = await signV2Payment(buyer, accepted, { signer: privateKeyToAccount(generatePrivateKey()) });
    await expectRefused(await paidPost(srv, SKU, body(), b64(other)), 402, "payment_failed", "invalid_exact_evm_signature");
    const mainnet = await signV2Payment(buyer, accepted, { chainId: 8453 });
    await expectRefused(await paidPost(srv, SKU, body(), b64(mainnet)), 402, "payment_failed", "invalid_exact_evm_signature");
  });

  it("a nonce already used on-chain outside this service: 402 nonce already used", async () => {
    const nonce = toHex(randomBytes(32)) as Hex;
    const p = (await signV2Payment(buyer, accepted, { nonce })) as { payload: { signature: Hex; authorization: Record<string, string> } };
    const a = p.payload.authorization;
    const sig = parseSignature(p.payload.signature);
    const { facilitator } = devAccounts();
    const data = encodeFunctionData({
      abi: DEV_USDC.abi,
      functionName: "transferWithAuthorization",
      args: [a.from, a.to, BigInt(a.value!), BigInt(a.validAfter!), BigInt(a.validBefore!), nonce, Number(sig.v), sig.r, sig.s],
    });
    // Executed directly on-chain (someone else relayed it); the buyer paid, but not for a call.
    const hash = await srv.chain.publicClient.sendRawTransaction({
      serializedTransaction: await facilitator.signTransaction({
        chainId: srv.chain.network.chainId,
        type: "eip1559",
        to: srv.chain.network.usdcAddress,
        data,
        gas: 150_000n,
        nonce: await srv.chain.publicClient.getTransactionCount({ address: facilitator.address, blockTag: "pending" }),
        ...(await srv.chain.publicClient.estimateFeesPerGas()),
      }),
    });
    await srv.chain.publicClient.waitForTransactionReceipt({ hash });
    balance -= BigInt(a.value!);
    await expectRefused(await paidPost(srv, SKU, body(), b64(p)), 402, "payment_failed", "invalid_exact_evm_nonce_already_used");
  });

  it("a payer without enough USDC: 402 insufficient balance", async () => {
    const poor = { account: privateKeyToAccount(generatePrivateKey()) } as Buyer;
    (poor as { address: string }).address = poor.account.address;
    const p = await signV2Payment(poor, accepted);
    await expectRefused(await paidPost(srv, SKU, { subject: poor.address }, b64(p)), 402, "payment_failed", "invalid_exact_evm_insufficient_balance");
  });

  it("a v1 payment naming another network: 402", async () => {
    const p = await signV2Payment(buyer, accepted);
    const v1 = { x402Version: 1, scheme: "exact", network: "base", payload: p.payload };
    await expectRefused(await paidPost(srv, SKU, body(), b64(v1), "x-payment"), 402, "payment_failed", "No matching payment requirements");
  });
});

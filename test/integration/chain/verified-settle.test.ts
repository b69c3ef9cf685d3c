import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { clone, create } from "@bufbuild/protobuf";
import { encodeFunctionData, toHex, type Hex, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { PaymentPayloadSchema, PaymentRequirementsSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { TransactionSender } from "../../../src/chain/tx-sender.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../src/x402/eip3009.js";
import { BuiltInFacilitator } from "../../../src/x402/builtin-facilitator.js";

// The built-in facilitator's settle trusts a verification it made moments ago of the very same payload
// (the payment gate's verify -> run -> settle): no second signature recovery or chain reads. Anything
// else (a payload it never verified, as the /facilitator/settle API receives) is checked in full, and
// a verified payment whose funds went away meanwhile fails on-chain without charging.

const PRICE = 10_000n;

describe("built-in facilitator: settle after its own verify", function () {
  this.timeout(60_000);
  let chain: ChainRuntime;
  let dir: string;
  let faucet: TransactionSender;
  let sender: TransactionSender;
  let reads = 0;
  let counted: PublicClient;
  const log = createLogger("silent");

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-verified-settle-"));
    const config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" });
    chain = await startChain(config, log);
    const opts = { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log };
    faucet = new TransactionSender(chain.publicClient, chain.faucetAccount!, chain.chain, opts);
    sender = new TransactionSender(chain.publicClient, chain.facilitatorAccount!, chain.chain, opts);
    // The facilitator's own client, counting its contract reads (the sender keeps the real one).
    counted = new Proxy(chain.publicClient, {
      get(target, prop, receiver) {
        if (prop === "readContract") return (...args: Parameters<PublicClient["readContract"]>) => (reads++, target.readContract(...args));
        return Reflect.get(target, prop, receiver);
      },
    }) as PublicClient;
  });
  after(async () => {
    await chain.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const requirements = () =>
    create(PaymentRequirementsSchema, {
      scheme: "exact",
      network: chain.network.caip2,
      amount: PRICE.toString(),
      asset: chain.network.usdcAddress,
      payTo: chain.treasury,
      maxTimeoutSeconds: 300,
      extra: { name: chain.network.usdcDomain.name, version: chain.network.usdcDomain.version },
    });

  async function fund(amount: bigint): Promise<PrivateKeyAccount> {
    const account = privateKeyToAccount(generatePrivateKey());
    await faucet.send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [account.address, amount] }), gas: 200_000n });
    return account;
  }

  async function sign(account: PrivateKeyAccount) {
    const auth = { from: account.address, to: chain.treasury, value: PRICE, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 300), nonce: toHex(randomBytes(32)) as Hex };
    const signature = await account.signTypedData({
      domain: { ...chain.network.usdcDomain, chainId: chain.network.chainId, verifyingContract: chain.network.usdcAddress },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: "TransferWithAuthorization",
      message: auth,
    });
    return create(PaymentPayloadSchema, {
      x402Version: 2,
      accepted: requirements(),
      payload: { signature, authorization: { from: auth.from, to: auth.to, value: PRICE.toString(), validAfter: "0", validBefore: auth.validBefore.toString(), nonce: auth.nonce } },
    });
  }

  const balance = async (a: string) => (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [a] })) as bigint;
  const facilitator = () => new BuiltInFacilitator(chain.network, counted, sender, undefined, undefined, undefined, log);

  it("settles a payload it verified without reading the chain again; one it did not verify is read in full", async () => {
    const f = facilitator();
    const buyer = await fund(2n * PRICE);
    const payload = await sign(buyer);
    const req = requirements();
    reads = 0;
    expect((await f.verify(payload, req)).isValid).to.equal(true);
    expect(reads).to.equal(2); // authorizationState + balanceOf
    expect(await f.settle(payload, req)).to.include({ success: true });
    expect(reads).to.equal(2);

    // A fresh copy (as the /facilitator/settle API decodes one per request) is not trusted.
    const other = await sign(buyer);
    await f.verify(clone(PaymentPayloadSchema, other), req);
    reads = 0;
    expect(await f.settle(other, req)).to.include({ success: true });
    expect(reads).to.equal(2);
    expect(await balance(buyer.address)).to.equal(0n);
  });

  it("re-checks in full when settled against other requirements than it verified, and refuses a forged copy", async () => {
    const f = facilitator();
    const buyer = await fund(PRICE);
    const payload = await sign(buyer);
    await f.verify(payload, requirements());
    // Verified against one requirements object, settled against another naming a different payee.
    const elsewhere = requirements();
    elsewhere.payTo = privateKeyToAccount(generatePrivateKey()).address;
    expect(await f.settle(payload, elsewhere)).to.include({ success: false, errorReason: "invalid_exact_evm_recipient_mismatch" });
    // A copy with a signature from someone else is checked, not trusted.
    const forged = clone(PaymentPayloadSchema, payload);
    forged.payload!.signature = (await sign(await fund(PRICE))).payload!.signature;
    expect(await f.settle(forged, requirements())).to.include({ success: false, errorReason: "invalid_exact_evm_signature" });
    expect(await balance(buyer.address)).to.equal(PRICE);
  });

  it("a verified payment whose balance is spent before it settles fails on-chain and charges nothing", async () => {
    const f = facilitator();
    const buyer = await fund(PRICE);
    const first = await sign(buyer);
    const second = await sign(buyer);
    const req = requirements();
    expect((await f.verify(first, req)).isValid).to.equal(true);
    expect((await f.verify(second, req)).isValid).to.equal(true);
    expect(await f.settle(second, req)).to.include({ success: true });
    const treasury = await balance(chain.treasury);
    const late = await f.settle(first, req);
    expect(late.success).to.equal(false);
    expect(late.errorReason).to.be.a("string").and.not.equal("");
    expect(await balance(buyer.address)).to.equal(0n);
    expect(await balance(chain.treasury)).to.equal(treasury);
  });
});

import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { clone } from "@bufbuild/protobuf";
import type { PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { PaymentPayloadSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { TransactionSender } from "../../../src/chain/tx-sender.js";
import { BuiltInFacilitator } from "../../../src/x402/builtin-facilitator.js";
import { directPayments } from "../../fixtures/direct-payments.js";

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

  const { requirements, fund, sign: signed, balance } = directPayments(() => chain, () => faucet, PRICE);
  const sign = async (account: Parameters<typeof signed>[0]) => (await signed(account)).payload;
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

import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeFunctionData, parseSignature, type Hex } from "viem";
import type { PaymentPayload } from "../../../gen/svc/payment/v1/x402_pb.js";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { TransactionSender } from "../../../src/chain/tx-sender.js";
import { findSettlement } from "../../../src/chain/settlement-logs.js";
import { BuiltInFacilitator } from "../../../src/x402/builtin-facilitator.js";
import { SettlementBatchQueue } from "../../../src/x402/settlement-batcher.js";
import { directPayments } from "../../fixtures/direct-payments.js";

// The SettlementBatcher contract through the built-in facilitator on a real anvil: every item of a
// batch runs in its own try/catch, so an authorization already used on-chain (front-run) or one the
// payer's balance no longer covers fails alone while the others settle in the same transaction.

const PRICE = 10_000n;

describe("SettlementBatcher on the dev chain", function () {
  this.timeout(60_000);
  let chain: ChainRuntime;
  let dir: string;
  let config: ReturnType<typeof loadConfig>;
  let faucet: TransactionSender;
  const log = createLogger("silent");

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-batcher-"));
    config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" });
    chain = await startChain(config, log);
    faucet = new TransactionSender(chain.publicClient, chain.faucetAccount!, chain.chain, { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
  });
  after(async () => {
    await chain.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const { requirements, fund, sign, balance } = directPayments(() => chain, () => faucet, PRICE);

  it("settles the good items of one batch transaction and fails the bad ones alone, each with its own outcome", async () => {
    const a = await fund(PRICE);
    const b = await fund(PRICE);
    const c = await fund(PRICE); // covers one of its two authorizations
    const d = await fund(PRICE);
    const signed = { a: await sign(a), b: await sign(b), c1: await sign(c), c2: await sign(c), d: await sign(d) };

    // Every settlement is verified (each alone is valid); then, before the batch is sent, b's
    // authorization is submitted directly on the token by a third party (EIP-3009 allows anyone).
    const real = new TransactionSender(chain.publicClient, chain.facilitatorAccount!, chain.chain, { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
    let frontRun: Hex | undefined;
    const sender = Object.assign(Object.create(real) as TransactionSender, {
      send: async (...args: Parameters<TransactionSender["send"]>) => {
        if (!frontRun) {
          const { auth, signature } = signed.b;
          const sig = parseSignature(signature);
          const data = encodeFunctionData({
            abi: DEV_USDC.abi,
            functionName: "transferWithAuthorization",
            args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, Number(sig.v), sig.r, sig.s],
          });
          frontRun = (await faucet.send({ to: chain.network.usdcAddress, data, gas: 150_000n })).transactionHash;
        }
        return real.send(...args);
      },
    });
    const facilitator = new BuiltInFacilitator(chain.network, chain.publicClient, sender, undefined, undefined, { batcher: config.settlementBatcherAddress!, windowMs: 5_000, max: 5, eager: false }, log);
    const treasuryBefore = await balance(chain.treasury);
    const order: PaymentPayload[] = [signed.a.payload, signed.b.payload, signed.c1.payload, signed.c2.payload, signed.d.payload];
    const [ra, rb, rc1, rc2, rd] = await Promise.all(order.map((p) => facilitator.settle(p, requirements())));

    const batchTx = ra!.transaction;
    for (const r of [ra, rc1, rd]) {
      expect(r).to.include({ success: true, transaction: batchTx });
      expect(r!.extra).to.have.property("batchIndex").that.is.a("number");
    }
    expect(new Set([ra, rc1, rd].map((r) => r!.extra!.batchIndex)).size).to.equal(3);
    // b was settled by the front-running transaction: the payment is paid, to the signed recipient.
    expect(rb).to.include({ success: true, transaction: frontRun });
    expect(rb!.extra).to.equal(undefined);
    // c's second authorization is not covered any more: it fails alone, in the same transaction.
    expect(rc2).to.include({ success: false, errorReason: "invalid_exact_evm_insufficient_balance", transaction: batchTx });
    expect(rc2!.errorMessage).to.contain("ERC20: transfer amount exceeds balance");

    // On-chain: one batch transaction to the batcher with one outcome event per item.
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: batchTx as Hex });
    expect(receipt.to!.toLowerCase()).to.equal(config.settlementBatcherAddress!.toLowerCase());
    const outcome = (s: typeof signed.a) => findSettlement(receipt.logs, chain.network.usdcAddress, s.auth.from, s.auth.nonce, undefined, config.settlementBatcherAddress);
    expect(outcome(signed.a)).to.deep.include({ used: true, batchIndex: ra!.extra!.batchIndex });
    expect(outcome(signed.b).failure).to.contain("authorization is used or canceled");
    expect(outcome(signed.c2).failure).to.contain("exceeds balance");
    expect(outcome(signed.c2).used).to.equal(false);
    expect(await balance(chain.treasury)).to.equal(treasuryBefore + 4n * PRICE); // a, b (front-run), c1, d
    expect(await balance(c.address)).to.equal(0n);
  });

  it("sends a window's lone settlement directly to the token, without a batch index", async () => {
    const a = await fund(PRICE);
    const facilitator = new BuiltInFacilitator(chain.network, chain.publicClient, faucetless(), undefined, undefined, { batcher: config.settlementBatcherAddress!, windowMs: 10, max: 50, eager: false }, log);
    const r = await facilitator.settle((await sign(a)).payload, requirements());
    expect(r.success).to.equal(true);
    expect(r.extra).to.equal(undefined);
    const tx = await chain.publicClient.getTransaction({ hash: r.transaction as Hex });
    expect(tx.to!.toLowerCase()).to.equal(chain.network.usdcAddress.toLowerCase());
  });

  it("eager (the default): sends a settlement that finds nothing in flight at once, and batches the ones that queue behind it", async () => {
    const [a, b, c, d] = await Promise.all([fund(PRICE), fund(PRICE), fund(PRICE), fund(PRICE)]);
    const [sa, sb, sc, sd] = [await sign(a), await sign(b), await sign(c), await sign(d)];
    // The first transaction is held in flight until the others have queued behind it.
    const real = faucetless();
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let sends = 0;
    const sender = Object.assign(Object.create(real) as TransactionSender, {
      send: async (...args: Parameters<TransactionSender["send"]>) => {
        if (sends++ === 0) {
          started();
          await released;
        }
        return real.send(...args);
      },
    });
    // A ten-minute window: nothing here may wait it out (the test would time out).
    const queue = new SettlementBatchQueue(sender, chain.network.usdcAddress, { batcher: config.settlementBatcherAddress!, windowMs: 600_000, max: 50 }, log);
    const first = queue.submit({ auth: sa.auth, signature: sa.signature });
    await inFlight;
    const rest = [sb, sc, sd].map((x) => queue.submit({ auth: x.auth, signature: x.signature }));
    release();
    const [ra, ...others] = await Promise.all([first, ...rest]);

    expect(ra!.batchIndex).to.equal(null); // alone, straight to the token
    expect(ra!.receipt.to!.toLowerCase()).to.equal(chain.network.usdcAddress.toLowerCase());
    const batchTx = others[0]!.receipt.transactionHash;
    expect(batchTx).to.not.equal(ra!.receipt.transactionHash);
    expect(others.map((o) => o.receipt.transactionHash)).to.deep.equal([batchTx, batchTx, batchTx]);
    expect(others.map((o) => o.batchIndex)).to.deep.equal([0, 1, 2]);
    expect(others[0]!.receipt.to!.toLowerCase()).to.equal(config.settlementBatcherAddress!.toLowerCase());
    expect(sends).to.equal(2); // two transactions for four settlements
    for (const acct of [a, b, c, d]) expect(await balance(acct.address)).to.equal(0n);
  });

  function faucetless() {
    return new TransactionSender(chain.publicClient, chain.facilitatorAccount!, chain.chain, { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
  }
});

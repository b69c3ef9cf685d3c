import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import type { DataSource } from "typeorm";
import { encodeFunctionData, getAddress, parseAbiItem, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../../../src/config.js";
import { DEV_USDC } from "../../../src/chain/artifacts.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { chainIdentity, TransactionSender } from "../../../src/chain/tx-sender.js";
import { JobQueue } from "../../../src/jobs/job-queue.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { SharedNonceCounter } from "../../../src/platform/db/shared-nonces.js";
import { newId } from "../../../src/platform/ids.js";
import { createLogger } from "../../../src/platform/log.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { PaymentStore } from "../../../src/x402/payment-store.js";
import { Refunder } from "../../../src/x402/refunds.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// Two servers (two Refunders, each with its own database pool and treasury sender sharing the nonce
// counter, as two processes have) on one database and one real anvil: a refund left `refunding` is sent
// by exactly one of them; a lease another server holds is respected until it runs out, then taken over;
// stored hashes are looked up on chain before anything is sent again.

const AMOUNT = 12_345n;

describe("refunds across a cluster: one sender per refund under a lease", function () {
  this.timeout(120_000);
  const log = createLogger("silent");
  let dir: string;
  let chain: ChainRuntime;
  let a: DataSource;
  let b: DataSource;
  let one: Refunder;
  let two: Refunder;
  let direct: TransactionSender;

  const senderOn = (ds: DataSource) => {
    const nonces = new SharedNonceCounter(ds, () => chainIdentity(chain.publicClient, chain.chain.id), chain.treasuryAccount!.address, 60_000);
    return new TransactionSender(chain.publicClient, chain.treasuryAccount!, chain.chain, { nonces, resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
  };
  const refunderOn = (ds: DataSource) => new Refunder(ds, new PaymentStore(ds), new JobQueue(ds), chain, senderOn(ds), 1_000, 60_000);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-refund-leases-"));
    chain = await startChain(loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" }), log);
    a = await openDataSource(testDatabaseConfig());
    b = await openDataSource(testDatabaseConfig());
    one = refunderOn(a);
    two = refunderOn(b);
    direct = senderOn(a);
    const faucet = new TransactionSender(chain.publicClient, chain.faucetAccount!, chain.chain, { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
    await faucet.send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [chain.treasury, 1_000_000_000n] }), gas: 200_000n });
  });
  after(async () => {
    await a?.destroy();
    await b?.destroy();
    await chain?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A settled payment whose refund was started (state refunding) by a server, with what it left behind. */
  async function refundingPayment(patch: Partial<X402PaymentEntity> = {}) {
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    const paymentId = newId("pay");
    const now = new Date();
    await a.manager.insert(X402PaymentEntity, {
      paymentId,
      paymentKey: randomBytes(32).toString("hex"),
      network: chain.network.caip2,
      asset: chain.network.usdcAddress,
      payer,
      nonce: `0x${randomBytes(32).toString("hex")}`,
      skuId: "research.test",
      amount: AMOUNT,
      x402Version: 2,
      state: "refunding",
      payloadJson: "{}",
      requirementsJson: "{}",
      responseJson: null,
      txHash: null,
      batchIndex: null,
      jobId: null,
      errorReason: null,
      refundTxHash: null,
      refundHolder: null,
      refundLeaseUntil: null,
      refundSentJson: null,
      createTime: now,
      updateTime: now,
      ...patch,
    });
    return { paymentId, payer };
  }

  const balance = async (who: Address) => (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [who] })) as bigint;
  const transfersTo = async (who: Address) =>
    (
      await chain.publicClient.getLogs({
        address: chain.network.usdcAddress,
        event: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"),
        args: { from: getAddress(chain.treasury), to: who },
        fromBlock: 0n,
      })
    ).length;
  const row = async (paymentId: string) => (await a.manager.findOneBy(X402PaymentEntity, { paymentId }))!;

  it("two servers resuming the same refunding payment at once send exactly one on-chain refund", async () => {
    const payments = await Promise.all(Array.from({ length: 4 }, () => refundingPayment()));
    // Each server resumes (its start, and its periodic retry) twice, all at once.
    await Promise.all([one.resume(), two.resume(), one.resume(), two.resume()]);
    for (const { paymentId, payer } of payments) {
      const p = await row(paymentId);
      expect(p.state).to.equal("refunded");
      expect(await balance(payer)).to.equal(AMOUNT);
      expect(await transfersTo(payer)).to.equal(1);
      expect(JSON.parse(p.refundSentJson!).hashes).to.include(p.refundTxHash);
    }
  });

  it("leaves a refund alone while another live server holds its lease, and takes it over once the lease ran out", async () => {
    const { paymentId, payer } = await refundingPayment({ refundHolder: "rfd-live-elsewhere", refundLeaseUntil: new Date(Date.now() + 60_000) });
    await Promise.all([one.resume(), two.resume()]);
    expect((await row(paymentId)).state).to.equal("refunding");
    expect(await transfersTo(payer)).to.equal(0);
    let refused: unknown;
    await one.refund(paymentId).catch((err) => (refused = err));
    expect(String(refused)).to.match(/another server/);

    // The holder died (kill -9): its lease runs out and any server takes the refund over.
    await a.manager.update(X402PaymentEntity, { paymentId }, { refundLeaseUntil: new Date(Date.now() - 1) });
    await Promise.all([one.resume(), two.resume()]);
    expect((await row(paymentId)).state).to.equal("refunded");
    expect(await balance(payer)).to.equal(AMOUNT);
    expect(await transfersTo(payer)).to.equal(1);
  });

  it("a dead server's refund that was mined is recorded from its stored hash, never sent again", async () => {
    const { paymentId, payer } = await refundingPayment();
    const receipt = await direct.send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [payer, AMOUNT] }), gas: 100_000n });
    const tx = await chain.publicClient.getTransaction({ hash: receipt.transactionHash });
    await a.manager.update(X402PaymentEntity, { paymentId }, { refundHolder: "rfd-dead", refundLeaseUntil: new Date(Date.now() - 1), refundTxHash: receipt.transactionHash, refundSentJson: JSON.stringify({ nonce: tx.nonce, hashes: [receipt.transactionHash] }) });
    await Promise.all([one.resume(), two.resume()]);
    const p = await row(paymentId);
    expect(p.state).to.equal("refunded");
    expect(p.refundTxHash).to.equal(receipt.transactionHash);
    expect(await balance(payer)).to.equal(AMOUNT);
  });

  it("waits for a stored refund transaction that can still be mined, and re-sends one whose nonce another transaction used", async () => {
    const latest = await chain.publicClient.getTransactionCount({ address: chain.treasury, blockTag: "latest" });
    const unknownHash = `0x${randomBytes(32).toString("hex")}` as Hex;
    // Its nonce is unused: it may still be mined, so nothing is sent.
    const waiting = await refundingPayment({ refundHolder: "rfd-dead", refundLeaseUntil: new Date(Date.now() - 1), refundTxHash: unknownHash, refundSentJson: JSON.stringify({ nonce: latest + 1_000, hashes: [unknownHash] }) });
    // Its nonce was used by another transaction (a gap fill, another send): it can never be mined.
    const dead = await refundingPayment({ refundHolder: "rfd-dead", refundLeaseUntil: new Date(Date.now() - 1), refundTxHash: unknownHash, refundSentJson: JSON.stringify({ nonce: latest - 1, hashes: [unknownHash] }) });
    await Promise.all([one.resume(), two.resume()]);
    expect((await row(waiting.paymentId)).state).to.equal("refunding");
    expect(await transfersTo(waiting.payer)).to.equal(0);
    expect((await row(dead.paymentId)).state).to.equal("refunded");
    expect(await balance(dead.payer)).to.equal(AMOUNT);
    expect(await transfersTo(dead.payer)).to.equal(1);
  });

  it("takes the nonce of a stored refund the node dropped, then sends the refund again once", async () => {
    const next = await chain.publicClient.getTransactionCount({ address: chain.treasury, blockTag: "pending" });
    const dropped = `0x${randomBytes(32).toString("hex")}` as Hex;
    const { paymentId, payer } = await refundingPayment({ refundHolder: "rfd-dead", refundLeaseUntil: new Date(Date.now() - 1), refundTxHash: dropped, refundSentJson: JSON.stringify({ nonce: next, hashes: [dropped] }) });
    // One pass: the node knows none of its hashes, so a 0-value transfer to self takes the nonce; nothing is refunded yet.
    await one.resume();
    expect((await row(paymentId)).state).to.equal("refunding");
    expect(await chain.publicClient.getTransactionCount({ address: chain.treasury, blockTag: "latest" })).to.be.greaterThan(next);
    expect(await transfersTo(payer)).to.equal(0);
    // Next pass: the nonce is used by another transaction, so the refund can never be mined: sent again, once.
    await Promise.all([one.resume(), two.resume()]);
    expect((await row(paymentId)).state).to.equal("refunded");
    expect(await balance(payer)).to.equal(AMOUNT);
    expect(await transfersTo(payer)).to.equal(1);
  });
});

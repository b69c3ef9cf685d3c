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
import { MarketJobEntity, PayoutEntity } from "../../../src/marketplace/marketplace.entity.js";
import { PayoutReleaser } from "../../../src/marketplace/payout-releaser.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { SharedNonceCounter } from "../../../src/platform/db/shared-nonces.js";
import { newId } from "../../../src/platform/ids.js";
import { createLogger } from "../../../src/platform/log.js";
import { ProofSigner } from "../../../src/proof/proof-signer.js";
import { AgentEntity } from "../../../src/registry/agent.entity.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// Two servers' payout releasers on one database and one anvil: a payout left `releasing` while its
// server is alive (lease held) is not re-sent by the other's resume(); one whose server died (lease ran
// out, nothing broadcast) is sent once; one whose stored transfer reverted is sent again once.

const NET = 7_777n;

describe("payout releases across a cluster: one sender per payout under a lease", function () {
  this.timeout(120_000);
  const log = createLogger("silent");
  let dir: string;
  let chain: ChainRuntime;
  let a: DataSource;
  let b: DataSource;
  let one: PayoutReleaser;
  let two: PayoutReleaser;

  const senderOn = (ds: DataSource) => {
    const nonces = new SharedNonceCounter(ds, () => chainIdentity(chain.publicClient, chain.chain.id), chain.treasuryAccount!.address, 60_000);
    return new TransactionSender(chain.publicClient, chain.treasuryAccount!, chain.chain, { nonces, resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-payout-leases-"));
    chain = await startChain(loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" }), log);
    const proofKey = { hmacKey: "payout-leases-test", isDevelopmentKey: true, signer: ProofSigner.fromFile(path.join(dir, "proof.pem")) };
    a = await openDataSource(testDatabaseConfig());
    b = await openDataSource(testDatabaseConfig());
    one = new PayoutReleaser(a, chain, senderOn(a), proofKey, log, true, undefined, 60_000);
    two = new PayoutReleaser(b, chain, senderOn(b), proofKey, log, true, undefined, 60_000);
    const faucet = new TransactionSender(chain.publicClient, chain.faucetAccount!, chain.chain, { resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
    await faucet.send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [chain.treasury, 1_000_000_000n] }), gas: 200_000n });
  });
  after(async () => {
    await a?.destroy();
    await b?.destroy();
    await chain?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A completed job's payout to a provider with a payout wallet, left `releasing` by a server. */
  async function releasingPayout(patch: Partial<PayoutEntity>) {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const now = new Date();
    const agentId = newId("ag", 20);
    const name = `prov-${randomBytes(4).toString("hex")}`;
    await a.manager.insert(AgentEntity, {
      agentId,
      name,
      nameKey: name,
      tier: "free",
      capabilitiesJson: "[]",
      evmAddress: wallet,
      apiKeyId: randomBytes(8).toString("hex"),
      apiKeyHash: randomBytes(32).toString("hex"),
      callbackUrl: null,
      callbackSecretEnc: null,
      callbackEventsJson: null,
      identityNetwork: null,
      identityRegistry: null,
      identityAgentId: null,
      identityOwner: null,
      createTime: now,
      updateTime: now,
    } as Partial<AgentEntity> as AgentEntity);
    const jobId = newId("job");
    await a.manager.insert(MarketJobEntity, { jobId, requestId: newId("req"), bidId: newId("bid"), providerAgentId: agentId, requesterAgentId: agentId, amount: NET + 100n, state: "completed", resultSummary: null, deliverable: null, contentSha256: null, createTime: now, completeTime: now } as Partial<MarketJobEntity> as MarketJobEntity);
    const payoutId = newId("po");
    await a.manager.insert(PayoutEntity, {
      payoutId,
      jobId,
      providerAgentId: agentId,
      gross: NET + 100n,
      feeBps: 100,
      fee: 100n,
      net: NET,
      dynamicFeeBps: 0,
      state: "releasing",
      rail: null,
      txHash: null,
      sentHashesJson: null,
      releaseHolder: "rel-elsewhere",
      releaseLeaseUntil: new Date(Date.now() + 60_000),
      createTime: now,
      releaseTime: now,
      ...patch,
    } as Partial<PayoutEntity> as PayoutEntity);
    return { payoutId, wallet };
  }

  const balance = async (who: Address) => (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [who] })) as bigint;
  const transfersTo = async (who: Address) =>
    (await chain.publicClient.getLogs({ address: chain.network.usdcAddress, event: parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)"), args: { from: getAddress(chain.treasury), to: who }, fromBlock: 0n })).length;
  const state = async (payoutId: string) => (await a.manager.findOneBy(PayoutEntity, { payoutId }))!.state;

  it("leaves a payout alone while the server releasing it holds its lease, then sends it once after the lease ran out", async () => {
    const { payoutId, wallet } = await releasingPayout({});
    await Promise.all([one.resume(), two.resume()]);
    let refused: unknown;
    await one.release(payoutId).catch((err) => (refused = err));
    expect(String(refused)).to.match(/payout_in_progress|not confirmed/);
    expect(await state(payoutId)).to.equal("releasing");
    expect(await transfersTo(wallet)).to.equal(0);

    // The holder died before broadcasting anything: once its lease runs out, exactly one server sends it.
    await a.manager.update(PayoutEntity, { payoutId }, { releaseLeaseUntil: new Date(Date.now() - 1) });
    await Promise.all([one.resume(), two.resume(), one.resume(), two.resume()]);
    expect(await state(payoutId)).to.equal("released");
    expect(await balance(wallet)).to.equal(NET);
    expect(await transfersTo(wallet)).to.equal(1);
  });

  it("re-sends once a payout whose stored transfer reverted (nothing moved), and leaves one that may still be mined", async () => {
    // The dead server's transfer reverted on chain (more than the treasury holds).
    const reverted = await senderOn(a).send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [chain.faucetAccount!.address, 10n ** 30n] }), gas: 100_000n });
    expect(reverted.status).to.equal("reverted");
    const { payoutId, wallet } = await releasingPayout({ sentHashesJson: JSON.stringify([reverted.transactionHash]), releaseLeaseUntil: new Date(Date.now() - 1) });
    // A transfer the node does not know: it may still be mined elsewhere, so it is never sent again.
    const unknown = `0x${randomBytes(32).toString("hex")}` as Hex;
    const waiting = await releasingPayout({ sentHashesJson: JSON.stringify([unknown]), releaseLeaseUntil: new Date(Date.now() - 1) });
    await Promise.all([one.resume(), two.resume()]);
    expect(await state(payoutId)).to.equal("released");
    expect(await balance(wallet)).to.equal(NET);
    expect(await transfersTo(wallet)).to.equal(1);
    expect(await state(waiting.payoutId)).to.equal("releasing");
    expect(await transfersTo(waiting.wallet)).to.equal(0);
  });

  it("a transfer stored signed but never broadcast (its holder died in between): its nonce is taken, then the payout is sent once", async () => {
    const treasury = chain.treasuryAccount!.address;
    const nonce = await chain.publicClient.getTransactionCount({ address: treasury, blockTag: "pending" });
    const neverSent = `0x${randomBytes(32).toString("hex")}` as Hex;
    const { payoutId, wallet } = await releasingPayout({ sentHashesJson: JSON.stringify({ nonce, hashes: [neverSent] }), releaseLeaseUntil: new Date(Date.now() - 1) });
    // First pass: the stored transfer could still be broadcast by nobody, but its nonce is free: a 0-value fill takes it.
    await one.resume();
    expect(await state(payoutId)).to.equal("releasing");
    expect(await chain.publicClient.getTransactionCount({ address: treasury, blockTag: "latest" })).to.be.greaterThan(nonce);
    expect(await transfersTo(wallet)).to.equal(0);
    // Next passes: the stored transfer can never be mined now, so exactly one server sends the payout.
    await Promise.all([one.resume(), two.resume()]);
    expect(await state(payoutId)).to.equal("released");
    expect(await balance(wallet)).to.equal(NET);
    expect(await transfersTo(wallet)).to.equal(1);
  });

  it("two servers releasing the same pending payout at once pay it once", async () => {
    const { payoutId, wallet } = await releasingPayout({ state: "pending", releaseHolder: null, releaseLeaseUntil: null, releaseTime: null });
    const results = await Promise.allSettled([one.release(payoutId), two.release(payoutId), one.resume(), two.resume()]);
    expect(results.some((r) => r.status === "fulfilled")).to.equal(true);
    expect(await state(payoutId)).to.equal("released");
    expect(await transfersTo(wallet)).to.equal(1);
  });
});

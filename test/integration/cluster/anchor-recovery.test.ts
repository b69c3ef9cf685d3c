import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import type { DataSource } from "typeorm";
import type { Hex } from "viem";
import { loadConfig } from "../../../src/config.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { chainIdentity, TransactionSender } from "../../../src/chain/tx-sender.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { SharedNonceCounter } from "../../../src/platform/db/shared-nonces.js";
import { newId } from "../../../src/platform/ids.js";
import { createLogger } from "../../../src/platform/log.js";
import { ProofAnchorer } from "../../../src/proof/proof-anchorer.js";
import { ProofAnchorEntity, ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../../../src/proof/proof-recorder.js";
import { ProofSigner } from "../../../src/proof/proof-signer.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// A Merkle anchor left `pending` by a server that died (kill -9 between claiming the batch and recording
// its transaction) is completed by any server once its lease runs out, once across the cluster: two
// anchorers on two database pools race for it; a transaction the dead server got mined is recorded, not
// sent again; a lease a live server holds is left alone.

describe("proof anchoring across a cluster: stale pending anchors", function () {
  this.timeout(120_000);
  const log = createLogger("silent");
  let dir: string;
  let chain: ChainRuntime;
  let a: DataSource;
  let b: DataSource;
  let one: ProofAnchorer;
  let two: ProofAnchorer;
  let direct: TransactionSender;
  let key: ProofKey;

  const senderOn = (ds: DataSource) => {
    const nonces = new SharedNonceCounter(ds, () => chainIdentity(chain.publicClient, chain.chain.id), chain.facilitatorAccount!.address, 60_000);
    return new TransactionSender(chain.publicClient, chain.facilitatorAccount!, chain.chain, { nonces, resendAfterMs: 5_000, timeoutMs: 30_000, pollMs: 25, log });
  };
  // Batches never fill nor time out here: only the stale anchors are sent.
  const anchorerOn = (ds: DataSource) => new ProofAnchorer(ds, chain, senderOn(ds), key, log, { batchSize: 10_000, maxWaitMs: 3_600_000, leaseMs: 60_000 });

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-anchor-recovery-"));
    chain = await startChain(loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" }), log);
    key = { hmacKey: "anchor-recovery-test", isDevelopmentKey: true, signer: ProofSigner.fromFile(path.join(dir, "proof.pem")) };
    a = await openDataSource(testDatabaseConfig());
    b = await openDataSource(testDatabaseConfig());
    one = anchorerOn(a);
    two = anchorerOn(b);
    direct = senderOn(a);
  });
  after(async () => {
    await a?.destroy();
    await b?.destroy();
    await chain?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Three records claimed into a pending anchor by a server that then died, as its anchor() leaves them. */
  async function deadServersAnchor(patch: Partial<ProofAnchorEntity>) {
    const records: ProofRecordEntity[] = [];
    for (let i = 0; i < 3; i++) {
      records.push(await recordProof(a.manager, key, { kind: PROOF_KIND.settledOutcome, settlementRef: `0x${randomBytes(32).toString("hex")}`, taskClass: "test", ts: new Date(), body: { i } }));
    }
    const root = SimpleMerkleTree.of(records.map((r) => `0x${r.recordSha256}`)).root;
    const anchorId = newId("anc");
    await a.manager.insert(ProofAnchorEntity, {
      anchorId,
      firstSequence: records[0]!.sequence,
      lastSequence: records.at(-1)!.sequence,
      leafCount: records.length,
      root,
      state: "pending",
      txHash: null,
      network: chain.network.caip2,
      createTime: new Date(),
      anchorTime: null,
      leaseUntil: new Date(Date.now() - 1),
      ...patch,
    });
    for (const r of records) await a.manager.update(ProofRecordEntity, { sequence: r.sequence }, { anchorId });
    return { anchorId, root };
  }

  const sentSoFar = () => chain.publicClient.getTransactionCount({ address: chain.facilitatorAccount!.address, blockTag: "latest" });


  it("completes a stale pending anchor whose transaction was never sent: one transaction across two servers", async () => {
    const { anchorId, root } = await deadServersAnchor({});
    const before = await sentSoFar();
    await Promise.all([one.anchorDue(), two.anchorDue(), one.anchorDue(), two.anchorDue()]);
    const anchor = (await a.manager.findOneBy(ProofAnchorEntity, { anchorId }))!;
    expect(anchor.state).to.equal("anchored");
    expect((await chain.publicClient.getTransaction({ hash: anchor.txHash as Hex })).input).to.equal(root);
    expect(await sentSoFar()).to.equal(before + 1);
    expect(await a.manager.countBy(ProofRecordEntity, { kind: PROOF_KIND.stateAnchor, settlementRef: anchor.txHash! })).to.equal(1);
  });

  it("records the transaction a dead server got mined instead of sending another", async () => {
    const { anchorId, root } = await deadServersAnchor({});
    const mined = await direct.send({ to: chain.facilitatorAccount!.address, data: root as Hex, gas: 60_000n });
    await a.manager.update(ProofAnchorEntity, { anchorId }, { txHash: mined.transactionHash });
    const before = await sentSoFar();
    await Promise.all([one.anchorDue(), two.anchorDue()]);
    const anchor = (await a.manager.findOneBy(ProofAnchorEntity, { anchorId }))!;
    expect(anchor.state).to.equal("anchored");
    expect(anchor.txHash).to.equal(mined.transactionHash);
    expect(await sentSoFar()).to.equal(before);
  });

  it("leaves a pending anchor alone while the server sending it holds its lease", async () => {
    const { anchorId } = await deadServersAnchor({ leaseUntil: new Date(Date.now() + 60_000) });
    const before = await sentSoFar();
    await Promise.all([one.anchorDue(), two.anchorDue()]);
    expect((await a.manager.findOneBy(ProofAnchorEntity, { anchorId }))!.state).to.equal("pending");
    expect(await sentSoFar()).to.equal(before);
    // Its lease runs out (the server died): now it is completed.
    await a.manager.update(ProofAnchorEntity, { anchorId }, { leaseUntil: new Date(Date.now() - 1) });
    expect(await one.anchorDue()).to.equal(1);
    expect((await a.manager.findOneBy(ProofAnchorEntity, { anchorId }))!.state).to.equal("anchored");
  });
});

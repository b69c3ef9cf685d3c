import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { IsNull, type DataSource, type EntityManager } from "typeorm";
import type { Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ProofAnchorEntity, ProofRecordEntity } from "./proof-record.entity.js";
import { PROOF_KIND, recordProof, type ProofKey } from "./proof-recorder.js";

// Merkle anchoring of the proof rail. Consecutive unanchored records are batched (every `batchSize`
// records, or whatever waited longer than `maxWaitMs`); the leaves are the records' SHA-256 hashes in
// rail order; the root is carried as the input data of a 0-value transaction from the anchor key to
// itself. Each record then has an inclusion proof, and the anchor is itself recorded (kind 30119).
// A batch is claimed by inserting its anchor row (first_sequence is unique), so across a cluster
// sharing one database each batch is anchored once.

export const MERKLE_TREE = "OpenZeppelin SimpleMerkleTree: leaves are the records' record_sha256 (bytes32), pairs hashed sorted with keccak256; the anchor transaction's input data is the root";
const ANCHOR_GAS = 60_000n;

export interface AnchorOptions {
  batchSize: number;
  maxWaitMs: number;
}

export class ProofAnchorer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly ds: DataSource,
    private readonly chain: ChainRuntime,
    private readonly sender: TransactionSender,
    private readonly key: ProofKey,
    private readonly log: Logger,
    private readonly opts: AnchorOptions,
  ) {}

  get address(): string {
    return this.sender.address;
  }

  start(pollMs = 2_000): void {
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.anchorDue().catch((err) => this.log.error({ err }, "anchoring failed")).finally(() => (this.running = undefined));
    }, pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Anchors every batch that is due; returns how many were anchored. */
  async anchorDue(now = Date.now()): Promise<number> {
    let anchored = 0;
    for (;;) {
      const batch = await this.ds.manager.find(ProofRecordEntity, { where: { anchorId: IsNull() }, order: { sequence: "ASC" }, take: this.opts.batchSize });
      if (!batch.length) return anchored;
      if (batch.length < this.opts.batchSize && now - batch[0]!.ts.getTime() < this.opts.maxWaitMs) return anchored;
      if (!(await this.anchor(batch))) return anchored;
      anchored++;
    }
  }

  private async anchor(batch: ProofRecordEntity[]): Promise<boolean> {
    const tree = SimpleMerkleTree.of(batch.map((r) => `0x${r.recordSha256}`));
    const anchor = Object.assign(new ProofAnchorEntity(), {
      anchorId: newId("anc"),
      firstSequence: batch[0]!.sequence,
      lastSequence: batch.at(-1)!.sequence,
      leafCount: batch.length,
      root: tree.root,
      state: "pending",
      txHash: null,
      network: this.chain.network.caip2,
      createTime: new Date(),
      anchorTime: null,
    });
    try {
      await runInTransaction(this.ds, async (m) => {
        await m.insert(ProofAnchorEntity, anchor);
        await m
          .createQueryBuilder()
          .update(ProofRecordEntity)
          .set({ anchorId: anchor.anchorId })
          .where("sequence BETWEEN :a AND :b AND anchor_id IS NULL", { a: anchor.firstSequence, b: anchor.lastSequence })
          .execute();
      });
    } catch (err) {
      if (isUniqueViolation(err)) return false; // another server anchors this batch
      throw err;
    }
    let tx: Hex;
    try {
      const receipt = await this.sender.send({ to: this.sender.address as Hex, data: tree.root as Hex, gas: ANCHOR_GAS });
      if (receipt.status !== "success") throw new Error(`anchor transaction ${receipt.transactionHash} reverted`);
      tx = receipt.transactionHash;
    } catch (err) {
      // Give the batch back so a later pass anchors it.
      await runInTransaction(this.ds, async (m) => {
        await m.update(ProofRecordEntity, { anchorId: anchor.anchorId }, { anchorId: null });
        await m.delete(ProofAnchorEntity, { anchorId: anchor.anchorId });
      });
      throw err;
    }
    await runInTransaction(this.ds, async (m: EntityManager) => {
      await m.update(ProofAnchorEntity, { anchorId: anchor.anchorId }, { state: "anchored", txHash: tx, anchorTime: new Date() });
      await recordProof(m, this.key, {
        kind: PROOF_KIND.stateAnchor,
        settlementRef: tx,
        taskClass: "proof-rail",
        ts: new Date(),
        body: { anchor_id: anchor.anchorId, root: tree.root, first_sequence: anchor.firstSequence, last_sequence: anchor.lastSequence, leaf_count: anchor.leafCount, network: anchor.network },
      });
    });
    this.log.info({ anchorId: anchor.anchorId, leaves: batch.length, tx }, "proof batch anchored");
    return true;
  }
}

/** The inclusion proof of a record in its anchored batch, or undefined when it is not anchored yet. */
export async function inclusionOf(m: EntityManager, record: ProofRecordEntity) {
  if (!record.anchorId) return undefined;
  const anchor = await m.findOneBy(ProofAnchorEntity, { anchorId: record.anchorId });
  if (!anchor || anchor.state !== "anchored") return undefined;
  const leaves = await m.find(ProofRecordEntity, { where: { anchorId: anchor.anchorId }, order: { sequence: "ASC" }, select: { sequence: true, recordSha256: true } });
  const tree = SimpleMerkleTree.of(leaves.map((l) => `0x${l.recordSha256}`));
  const index = leaves.findIndex((l) => l.sequence === record.sequence);
  return { root: tree.root, leafIndex: BigInt(index), path: tree.getProof(index), anchorTxHash: anchor.txHash!, anchorNetwork: anchor.network };
}

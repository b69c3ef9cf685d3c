import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { IsNull, type DataSource, type EntityManager } from "typeorm";
import { TransactionReceiptNotFoundError, type Hex } from "viem";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { BroadcastError, type TransactionSender } from "../chain/tx-sender.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ProofAnchorEntity, ProofRecordEntity } from "./proof-record.entity.js";
import { simpleMerkleRoot } from "./merkle-root.js";
import { PROOF_KIND, recordProof, type ProofKey } from "./proof-recorder.js";

// Merkle anchoring of the proof rail. Consecutive unanchored records are batched (every `batchSize`
// records, or whatever waited longer than `maxWaitMs`); the leaves are the records' SHA-256 hashes in
// rail order; the root is carried as the input data of a 0-value transaction from the anchor key to
// itself. Each record then has an inclusion proof, and the anchor is itself recorded (kind 30119).
// A batch is claimed by inserting its anchor row (first_sequence is unique), so across a cluster
// sharing one database each batch is anchored once. The anchor row is `pending` under a lease while its
// server sends the transaction (the hash is stored as soon as it is broadcast); a pending anchor whose
// lease ran out (its server died, or the send's outcome was unknown) is taken over by any server with a
// guarded update: recorded from its stored transaction when that was mined, else sent again (a second
// 0-value transaction carrying the same root costs gas only; either one proves the root).

/** Some of a batch's records were claimed by another server meanwhile: roll back and read again. */
class BatchTaken extends Error {}
class Reverted extends Error {}

export const MERKLE_TREE = "OpenZeppelin SimpleMerkleTree: leaves are the records' record_sha256 (bytes32), pairs hashed sorted with keccak256; the anchor transaction's input data is the root";
const ANCHOR_GAS = 60_000n;

export interface AnchorOptions {
  batchSize: number;
  maxWaitMs: number;
  /** How long a pending anchor is its server's to send (covers a whole send); default 5 minutes. */
  leaseMs?: number;
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
    let anchored = await this.recoverStale(now);
    for (;;) {
      if (!(await this.due(now))) return anchored;
      const batch = await this.ds.manager.find(ProofRecordEntity, { where: { anchorId: IsNull() }, order: { sequence: "ASC" }, take: this.opts.batchSize });
      // due() decided from two rows; the batch loaded since is checked again (another server may have anchored in between).
      if (!batch.length) return anchored;
      if (batch.length < this.opts.batchSize && now - batch[0]!.ts.getTime() < this.opts.maxWaitMs) return anchored;
      if (!(await this.anchor(batch))) return anchored;
      anchored++;
    }
  }

  /**
   * Whether the next batch is due (full, or its oldest record has waited maxWaitMs), decided from two keyed rows
   * instead of loading the batch: on a busy server most polls find a batch still filling, and loading up to
   * batchSize records with their bodies every poll blocked the event loop for milliseconds.
   */
  private async due(now: number): Promise<boolean> {
    const unanchored = { where: { anchorId: IsNull() }, order: { sequence: "ASC" as const } };
    const first = await this.ds.manager.find(ProofRecordEntity, { ...unanchored, select: { sequence: true, ts: true }, take: 1 });
    if (!first.length) return false;
    if (now - first[0]!.ts.getTime() >= this.opts.maxWaitMs) return true;
    const last = await this.ds.manager.find(ProofRecordEntity, { ...unanchored, select: { sequence: true }, skip: this.opts.batchSize - 1, take: 1 });
    return last.length > 0;
  }

  private async anchor(batch: ProofRecordEntity[]): Promise<boolean> {
    const root = simpleMerkleRoot(batch.map((r) => `0x${r.recordSha256}`));
    const anchor = Object.assign(new ProofAnchorEntity(), {
      anchorId: newId("anc"),
      firstSequence: batch[0]!.sequence,
      lastSequence: batch.at(-1)!.sequence,
      leafCount: batch.length,
      root,
      state: "pending",
      txHash: null,
      network: this.chain.network.caip2,
      createTime: new Date(),
      anchorTime: null,
      leaseUntil: new Date(Date.now() + this.leaseMs),
    });
    try {
      await runInTransaction(this.ds, async (m) => {
        await m.insert(ProofAnchorEntity, anchor);
        // Exactly the batch's records: on MySQL a record committed late may carry a sequence inside the
        // range without being a leaf of this tree (it goes into a later batch).
        const tagged = await m
          .createQueryBuilder()
          .update(ProofRecordEntity)
          .set({ anchorId: anchor.anchorId })
          .where("sequence IN (:...seqs) AND anchor_id IS NULL", { seqs: batch.map((r) => r.sequence) })
          .execute();
        if ((tagged.affected ?? 0) !== batch.length) throw new BatchTaken();
      });
    } catch (err) {
      if (isUniqueViolation(err) || err instanceof BatchTaken) return false; // another server anchors this batch
      throw err;
    }
    let tx: Hex;
    try {
      const receipt = await this.sender.send({ to: this.sender.address as Hex, data: root as Hex, gas: ANCHOR_GAS }, (hash) => this.rememberHash(anchor.anchorId, hash));
      if (receipt.status !== "success") throw new Reverted(`anchor transaction ${receipt.transactionHash} reverted`);
      tx = receipt.transactionHash;
    } catch (err) {
      // Nothing can be mined: give the batch back so a later pass anchors it. Otherwise (sent, outcome
      // unknown) it stays pending and is completed or re-sent once its lease runs out.
      if (err instanceof BroadcastError || err instanceof Reverted) {
        await runInTransaction(this.ds, async (m) => {
          await m.update(ProofRecordEntity, { anchorId: anchor.anchorId }, { anchorId: null });
          await m.delete(ProofAnchorEntity, { anchorId: anchor.anchorId });
        });
      }
      throw err;
    }
    await this.complete(anchor, tx);
    this.log.info({ anchorId: anchor.anchorId, leaves: batch.length, tx }, "proof batch anchored");
    return true;
  }

  private get leaseMs(): number {
    return this.opts.leaseMs ?? 5 * 60_000;
  }

  /** Pending anchors whose lease ran out: each taken by one server (guarded update), recorded from its mined transaction or sent again. */
  private async recoverStale(now: number): Promise<number> {
    const expired = "state = 'pending' AND (lease_until < :now OR (lease_until IS NULL AND create_time < :old))";
    const params = { now: new Date(now), old: new Date(now - this.leaseMs) };
    const stale = await this.ds.manager.createQueryBuilder(ProofAnchorEntity, "a").where(expired.replace(/(state|lease_until|create_time)/g, "a.$1"), params).getMany();
    let recovered = 0;
    for (const anchor of stale) {
      const claimed = await this.ds
        .createQueryBuilder()
        .update(ProofAnchorEntity)
        .set({ leaseUntil: new Date(Date.now() + this.leaseMs) })
        .where(`anchor_id = :id AND ${expired}`, { id: anchor.anchorId, ...params })
        .execute();
      if ((claimed.affected ?? 0) !== 1) continue; // another server took it
      try {
        let tx = anchor.txHash ? await this.minedTx(anchor.txHash as Hex) : undefined;
        if (!tx) {
          const receipt = await this.sender.send({ to: this.sender.address as Hex, data: anchor.root as Hex, gas: ANCHOR_GAS }, (hash) => this.rememberHash(anchor.anchorId, hash));
          if (receipt.status !== "success") throw new Error(`anchor transaction ${receipt.transactionHash} reverted`);
          tx = receipt.transactionHash;
        }
        await this.complete(anchor, tx);
        this.log.warn({ anchorId: anchor.anchorId, tx }, "stale pending anchor completed");
        recovered++;
      } catch (err) {
        this.log.error({ err, anchorId: anchor.anchorId }, "stale pending anchor not completed yet; retried when its lease runs out");
      }
    }
    return recovered;
  }

  /** The hash when its transaction was mined successfully; undefined when not (yet) or reverted. */
  private async minedTx(hash: Hex): Promise<Hex | undefined> {
    try {
      const receipt = await this.chain.publicClient.getTransactionReceipt({ hash });
      return receipt.status === "success" ? hash : undefined;
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    }
  }

  private async rememberHash(anchorId: string, hash: Hex): Promise<void> {
    await this.ds.manager.update(ProofAnchorEntity, { anchorId, state: "pending" }, { txHash: hash });
  }

  /** pending -> anchored with its state-anchor proof, once (guarded update). */
  private async complete(anchor: ProofAnchorEntity, tx: Hex): Promise<void> {
    await runInTransaction(this.ds, async (m: EntityManager) => {
      const done = await m.update(ProofAnchorEntity, { anchorId: anchor.anchorId, state: "pending" }, { state: "anchored", txHash: tx, anchorTime: new Date(), leaseUntil: null });
      if ((done.affected ?? 0) !== 1) return;
      await recordProof(m, this.key, {
        kind: PROOF_KIND.stateAnchor,
        settlementRef: tx,
        taskClass: "proof-rail",
        ts: new Date(),
        body: { anchor_id: anchor.anchorId, root: anchor.root, first_sequence: anchor.firstSequence, last_sequence: anchor.lastSequence, leaf_count: anchor.leafCount, network: anchor.network },
      });
    });
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

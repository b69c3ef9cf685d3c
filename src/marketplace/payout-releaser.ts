import { encodeFunctionData, getAddress, type Address, type Hex } from "viem";
import type { DataSource } from "typeorm";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import { BroadcastError, type TransactionSender } from "../chain/tx-sender.js";
import { knownToNode, parseSent, sentOutcome, takeTreasuryNonce, withSent } from "../chain/sent-outcome.js";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { DisputeEntity } from "../arbitration/dispute.entity.js";
import { errors } from "../platform/rpc/errors.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { StarterNoteEntity } from "../registry/starter-note.entity.js";
import { enqueueWebhook } from "../webhooks/webhook-outbox.js";
import { MarketJobEntity, PayoutEntity } from "./marketplace.entity.js";
import { payableOut } from "./marketplace-ledger.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../proof/proof-recorder.js";

// Operator-released payouts. A provider with a payout wallet is paid in USDC on-chain from the
// treasury (when starter-credit cash-out is allowed: every job is funded by starter credit, which is
// given away at registration); otherwise it is credited on its starter-credit note. The payout moves pending -> releasing
// (guarded: one release per payout) -> released with its ledger entry and public receipt. Every signed
// transfer is stored with its nonce before it is broadcast, so a release whose outcome is unknown (not mined in time, a
// crash) stays `releasing` and is settled later from whichever transfer was mined: never paid twice.
// It goes back to `pending` only when nothing can have moved (refused by the node, reverted, or its
// nonce used by another transaction). Across a cluster one server at a time sends a payout: it holds a
// lease on the row (release_holder / release_lease_until, renewed while it sends); only the holder, or any
// server once the lease ran out (the holder died), may put a `releasing` payout back to pending and send
// it again, so a live server's send is never duplicated by another server's resume().

const TRANSFER_GAS = 100_000n;

/** The send failed without an answer and no hash was stored: it may have reached the node, so the lease is kept until it runs out. */
class UnknownUnrecorded extends Error {}

export class PayoutReleaser {
  /** This instance's name in release_holder. */
  readonly holder = newId("rel");
  /** Payouts this instance is sending now. */
  private readonly sending = new Set<string>();

  constructor(
    private readonly ds: DataSource,
    private readonly chain: ChainRuntime,
    private readonly treasurySender: TransactionSender | undefined,
    private readonly proofKey: ProofKey,
    private readonly log: Logger,
    /** Whether starter-credit-funded work may be paid in USDC (every job is funded by a note today). */
    private readonly cashout: boolean,
    /** Recomputes the provider's reputation once a release records its work. */
    private readonly onReleased: (providerAgentId: string) => Promise<unknown> = async () => undefined,
    /** How long a lease covers a send: at least the sender's timeout plus its resend window. */
    private readonly leaseMs = 5 * 60_000,
  ) {}

  async release(payoutId: string): Promise<PayoutEntity> {
    const payout = await this.ds.manager.findOneBy(PayoutEntity, { payoutId });
    if (!payout) throw errors.notFound("payout_not_found", `no payout ${payoutId}`);
    if (payout.state === "released") return payout;
    if (payout.state === "cancelled") throw errors.failedPrecondition("payout_cancelled", `payout ${payoutId} was cancelled: an upheld dispute refunded the requester`);
    if (await this.ds.manager.countBy(DisputeEntity, { jobId: payout.jobId, state: "open" })) {
      throw errors.failedPrecondition("dispute_open", `job ${payout.jobId} has an open dispute: its payout is held until the operator panel decides`);
    }
    const provider = (await this.ds.manager.findOneBy(AgentEntity, { agentId: payout.providerAgentId }))!;
    if (payout.state === "releasing") return this.settleInFlight(payout, provider);
    const claimed = await this.ds.manager.update(PayoutEntity, { payoutId, state: "pending" }, { state: "releasing", releaseTime: new Date(), releaseHolder: this.holder, releaseLeaseUntil: this.leaseEnd() });
    if ((claimed.affected ?? 0) !== 1) return this.release(payoutId);
    return this.underLease(payoutId, () => this.send(payout, provider));
  }

  /** Runs `work` while this instance holds the payout's lease (renewed); hands it back after, unless a broadcast may be unrecorded. */
  private async underLease<T>(payoutId: string, work: () => Promise<T>): Promise<T> {
    this.sending.add(payoutId);
    const renew = setInterval(() => {
      void this.ds.manager.update(PayoutEntity, { payoutId, state: "releasing", releaseHolder: this.holder }, { releaseLeaseUntil: this.leaseEnd() }).catch(() => undefined);
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    renew.unref();
    let keepLease = false;
    try {
      return await work();
    } catch (err) {
      keepLease = err instanceof UnknownUnrecorded || (err as { cause?: unknown }).cause instanceof UnknownUnrecorded;
      throw err;
    } finally {
      clearInterval(renew);
      this.sending.delete(payoutId);
      if (!keepLease) await this.ds.manager.update(PayoutEntity, { payoutId, releaseHolder: this.holder }, { releaseLeaseUntil: null }).catch(() => undefined);
    }
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + this.leaseMs);
  }

  /** Under the lease, a payout just claimed (releasing, nothing broadcast): credit note or USDC transfer. */
  private async send(payout: PayoutEntity, provider: AgentEntity): Promise<PayoutEntity> {
    const payoutId = payout.payoutId;
    if (!provider.evmAddress || !this.treasurySender || !this.cashout) {
      const noteId = (await this.ds.manager.findOne(StarterNoteEntity, { where: { agentId: provider.agentId }, order: { createTime: "ASC" } }))?.noteId;
      if (!noteId) return this.backToPending(payoutId, new Error("the provider has neither a payout wallet nor a starter-credit note"));
      return this.record(payout, provider, "starter_credit", null, noteId).catch((err) => this.backToPending(payoutId, err));
    }
    const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [getAddress(provider.evmAddress) as Address, payout.net] });
    let receipt;
    let stored = 0;
    try {
      // Stored signed, with its nonce, before it is broadcast: no crash leaves a sent transfer unknown.
      const beforeBroadcast = async (hash: Hex, nonce: number) => {
        await this.remember(payoutId, hash, nonce);
        stored++;
      };
      receipt = await this.treasurySender.send({ to: this.chain.network.usdcAddress, data, gas: TRANSFER_GAS, beforeBroadcast });
    } catch (err) {
      if (err instanceof BroadcastError) return this.backToPending(payoutId, err); // nothing was broadcast
      this.log.error({ err, payoutId }, "payout transfer outcome unknown; left releasing");
      const cause = stored ? err : new UnknownUnrecorded((err as Error).message, { cause: err });
      throw errors.unavailable("payout_outcome_unknown", "the payout transfer was sent but not confirmed; release again later to record it", cause);
    }
    if (receipt.status !== "success") return this.backToPending(payoutId, new Error(`payout transfer ${receipt.transactionHash} reverted`));
    return this.record(payout, provider, "usdc", receipt.transactionHash, undefined);
  }

  /** Resumes releases left in flight (a crash, an unknown outcome) whose lease ran out. */
  async resume(): Promise<void> {
    const now = new Date();
    for (const p of await this.ds.manager.findBy(PayoutEntity, { state: "releasing" })) {
      if (p.releaseLeaseUntil && p.releaseLeaseUntil > now && !p.sentHashesJson) continue; // being sent by a live server
      await this.release(p.payoutId).catch((err) => this.log.warn({ err, payoutId: p.payoutId }, "payout still in flight"));
    }
  }

  /**
   * A `releasing` payout: recorded from its mined transfer; otherwise, only by the lease holder or once the
   * lease ran out, back to pending and released again when nothing can move any more; else still in flight.
   */
  private async settleInFlight(payout: PayoutEntity, provider: AgentEntity): Promise<PayoutEntity> {
    const mined = await this.minedTransfer(payout);
    if (mined) return this.record(payout, provider, "usdc", mined, undefined);
    const payoutId = payout.payoutId;
    if (this.sending.has(payoutId) || !(await this.takeExpiredLease(payoutId))) {
      throw errors.failedPrecondition("payout_in_progress", "this payout's transfer is being sent by a server and is not confirmed yet");
    }
    return this.underLease(payoutId, async () => {
      const row = (await this.ds.manager.findOneBy(PayoutEntity, { payoutId }))!;
      if (row.state !== "releasing") return this.release(payoutId);
      const sent = parseSent(row.sentHashesJson);
      // Nothing broadcast by a holder that died, or broadcasts that can never be mined: nothing moved.
      const outcome = sent.hashes.length ? await sentOutcome(this.chain.publicClient, this.treasurySender!.address, sent.hashes, sent.nonce) : { kind: "dead" as const };
      if (outcome.kind === "mined") return this.record(row, provider, "usdc", outcome.receipt.transactionHash, undefined);
      // Stored but unknown to the node (dropped, or the holder died before broadcasting it): take its nonce, so
      // it can never be mined and the next pass finds it dead and sends the payout again.
      if (outcome.kind === "pending" && sent.nonce !== undefined && !(await knownToNode(this.chain.publicClient, sent.hashes))) {
        await takeTreasuryNonce(this.chain, this.treasurySender!.address, sent.nonce).catch(() => undefined);
      }
      if (outcome.kind === "dead") {
        const back = await this.ds.manager.update(PayoutEntity, { payoutId, state: "releasing", releaseHolder: this.holder }, { state: "pending", sentHashesJson: null, releaseTime: null, releaseHolder: null, releaseLeaseUntil: null });
        if ((back.affected ?? 0) === 1) return this.release(payoutId);
      }
      throw errors.failedPrecondition("payout_in_progress", "this payout's transfer is not confirmed yet");
    });
  }

  /** A successful transfer among the payout's stored broadcasts, if any was mined. */
  private async minedTransfer(payout: PayoutEntity): Promise<Hex | undefined> {
    const hashes = parseSent(payout.sentHashesJson).hashes;
    const receipts = await Promise.all(hashes.map((hash) => this.chain.publicClient.getTransactionReceipt({ hash }).catch(() => undefined)));
    return receipts.find((r) => r?.status === "success")?.transactionHash;
  }

  /** Guarded: takes a releasing payout's lease when it is free or ran out (a row from before leases: 5 minutes after its claim). */
  private async takeExpiredLease(payoutId: string): Promise<boolean> {
    const now = new Date();
    const res = await this.ds
      .createQueryBuilder()
      .update(PayoutEntity)
      .set({ releaseHolder: this.holder, releaseLeaseUntil: this.leaseEnd() })
      .where("payout_id = :payoutId AND state = 'releasing' AND (release_lease_until < :now OR (release_lease_until IS NULL AND (release_holder IS NOT NULL OR release_time < :old)))", {
        payoutId,
        now,
        old: new Date(now.getTime() - this.leaseMs),
      })
      .execute();
    return (res.affected ?? 0) === 1;
  }

  private async remember(payoutId: string, hash: Hex, nonce: number): Promise<void> {
    const row = (await this.ds.manager.findOneBy(PayoutEntity, { payoutId }))!;
    // Guarded by the lease: a holder whose lease another server took over stores nothing, so it broadcasts nothing.
    const res = await this.ds.manager.update(PayoutEntity, { payoutId, state: "releasing", releaseHolder: this.holder }, { sentHashesJson: JSON.stringify(withSent(parseSent(row.sentHashesJson), hash, nonce)) });
    if ((res.affected ?? 0) !== 1) throw new Error(`payout ${payoutId}: this server no longer holds its lease`);
  }

  private async backToPending(payoutId: string, err: unknown): Promise<never> {
    // Guarded by the holder: never undoes a claim another server made meanwhile.
    await this.ds.manager.update(PayoutEntity, { payoutId, state: "releasing", releaseHolder: this.holder }, { state: "pending", sentHashesJson: null, releaseTime: null, releaseHolder: null, releaseLeaseUntil: null });
    this.log.error({ err, payoutId }, "payout release failed; nothing moved");
    throw errors.unavailable("payout_failed", `the payout could not be released (nothing moved): ${(err as Error).message}`, err);
  }

  private async record(payout: PayoutEntity, provider: AgentEntity, rail: "usdc" | "starter_credit", txHash: string | null, noteId: string | undefined): Promise<PayoutEntity> {
    const released = await this.recordOnce(payout, provider, rail, txHash, noteId);
    await this.onReleased(provider.agentId).catch((err) => this.log.warn({ err }, "reputation refresh after release failed"));
    return released;
  }

  private recordOnce(payout: PayoutEntity, provider: AgentEntity, rail: "usdc" | "starter_credit", txHash: string | null, noteId: string | undefined): Promise<PayoutEntity> {
    const payoutId = payout.payoutId;
    return runInTransaction(this.ds, async (m) => {
      const done = await m.update(PayoutEntity, { payoutId, state: "releasing" }, { state: "released", rail, txHash, releaseTime: new Date() });
      if ((done.affected ?? 0) !== 1) return (await m.findOneBy(PayoutEntity, { payoutId }))!;
      await payableOut(m, payoutId, provider.agentId, payout.net, rail === "usdc" ? { usdc: true } : { noteId: noteId! });
      await m.update(MarketJobEntity, { jobId: payout.jobId }, { state: "paid" });
      // The public receipt of the delegation: fee and payout, never cost or net figures of the service.
      const job = (await m.findOneBy(MarketJobEntity, { jobId: payout.jobId }))!;
      await recordProof(m, this.proofKey, {
        kind: PROOF_KIND.delegation,
        settlementRef: txHash ?? payoutId,
        taskClass: "marketplace",
        ts: new Date(),
        body: {
          job_id: job.jobId,
          request_id: job.requestId,
          requester: job.requesterAgentId,
          provider: job.providerAgentId,
          content_sha256: job.contentSha256,
          gross_amount: payout.gross.toString(),
          svc_fee_bps: payout.feeBps,
          svc_fee_amount: payout.fee.toString(),
          provider_payout_amount: payout.net.toString(),
          dynamic_fee_bps: payout.dynamicFeeBps,
          rail,
        },
      });
      await enqueueWebhook(m, provider, "payout.released", { payout_id: payoutId, job_id: payout.jobId, net_amount: payout.net.toString(), svc_fee_bps: payout.feeBps, rail, tx_hash: txHash });
      return (await m.findOneBy(PayoutEntity, { payoutId }))!;
    });
  }
}

import { encodeFunctionData, getAddress, type Address } from "viem";
import type { DataSource } from "typeorm";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { DEV_USDC } from "../chain/artifacts.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { Logger } from "../platform/log.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { errors } from "../platform/rpc/errors.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { StarterNoteEntity } from "../registry/starter-note.entity.js";
import { enqueueWebhook } from "../webhooks/webhook-outbox.js";
import { MarketJobEntity, PayoutEntity } from "./marketplace.entity.js";
import { payableOut } from "./marketplace-ledger.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../proof/proof-recorder.js";

// Operator-released payouts. A provider with a payout wallet is paid in USDC on-chain from the
// treasury; one without is credited on its starter-credit note. The payout moves pending -> releasing
// (guarded: one release per payout) -> released with its ledger entry; releasing twice pays once.

const TRANSFER_GAS = 100_000n;

export class PayoutReleaser {
  constructor(
    private readonly ds: DataSource,
    private readonly chain: ChainRuntime,
    private readonly treasurySender: TransactionSender | undefined,
    private readonly proofKey: ProofKey,
    private readonly log: Logger,
  ) {}

  async release(payoutId: string): Promise<PayoutEntity> {
    const payout = await this.ds.manager.findOneBy(PayoutEntity, { payoutId });
    if (!payout) throw errors.notFound("payout_not_found", `no payout ${payoutId}`);
    if (payout.state === "released") return payout;
    const provider = (await this.ds.manager.findOneBy(AgentEntity, { agentId: payout.providerAgentId }))!;
    if (payout.state === "releasing") {
      // A transfer broadcast by an interrupted release: record it once it is mined.
      const receipt = payout.txHash ? await this.chain.publicClient.getTransactionReceipt({ hash: payout.txHash as `0x${string}` }).catch(() => undefined) : undefined;
      if (receipt?.status === "success") return this.record(payout, provider, "usdc", receipt.transactionHash, undefined);
      throw errors.failedPrecondition("payout_in_progress", "this payout is being released");
    }
    const claimed = await this.ds.manager.update(PayoutEntity, { payoutId, state: "pending" }, { state: "releasing" });
    if ((claimed.affected ?? 0) !== 1) return this.release(payoutId);

    let rail: "usdc" | "starter_credit";
    let txHash: string | null = null;
    let noteId: string | undefined;
    try {
      if (provider.evmAddress && this.treasurySender) {
        rail = "usdc";
        const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [getAddress(provider.evmAddress) as Address, payout.net] });
        const receipt = await this.treasurySender.send({ to: this.chain.network.usdcAddress, data, gas: TRANSFER_GAS }, async (hash) => {
          await this.ds.manager.update(PayoutEntity, { payoutId }, { txHash: hash }); // stored before waiting: resumable
        });
        if (receipt.status !== "success") throw new Error(`payout transfer ${receipt.transactionHash} reverted`);
        txHash = receipt.transactionHash;
      } else {
        rail = "starter_credit";
        noteId = (await this.ds.manager.findOne(StarterNoteEntity, { where: { agentId: provider.agentId }, order: { createTime: "ASC" } }))?.noteId;
        if (!noteId) throw new Error("the provider has neither a payout wallet nor a starter-credit note");
      }
    } catch (err) {
      // Nothing moved (a refused or reverted transfer): back to pending for another release.
      if (!txHash) await this.ds.manager.update(PayoutEntity, { payoutId, state: "releasing" }, { state: "pending", txHash: null });
      this.log.error({ err, payoutId }, "payout release failed");
      throw errors.unavailable("payout_failed", `the payout could not be released: ${(err as Error).message}`, err);
    }
    return this.record(payout, provider, rail, txHash, noteId);
  }

  /** Resumes releases a crash interrupted after their transfer was broadcast. */
  async resume(): Promise<void> {
    for (const p of await this.ds.manager.findBy(PayoutEntity, { state: "releasing" })) {
      if (p.txHash) await this.release(p.payoutId).catch((err) => this.log.warn({ err, payoutId: p.payoutId }, "payout still in flight"));
    }
  }

  private record(payout: PayoutEntity, provider: AgentEntity, rail: "usdc" | "starter_credit", txHash: string | null, noteId: string | undefined): Promise<PayoutEntity> {
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

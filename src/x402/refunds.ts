import { encodeFunctionData, getAddress, type Address, type Hex } from "viem";
import type { DataSource } from "typeorm";
import { DEV_USDC } from "../chain/artifacts.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ACCOUNTS, postEntry } from "../ledger/ledger.js";
import type { PaymentStore } from "./payment-store.js";
import type { JobQueue } from "../jobs/job-queue.js";
import { feeSplit } from "./payment-gate.js";

// Refunds a settled payment on-chain from the treasury (an async job that failed after settlement).
// The payment moves settled -> refunding (guarded: one refund per payment), the refund's hash is stored
// as soon as it is broadcast, and on its receipt the payment becomes refunded and the sale is reversed
// in the ledger. A refund interrupted by a crash is resumed from its stored hash.

const TRANSFER_GAS = 100_000n;

export class Refunder {
  constructor(
    private readonly ds: DataSource,
    private readonly store: PaymentStore,
    private readonly jobs: JobQueue,
    private readonly chain: ChainRuntime,
    private readonly treasurySender: TransactionSender | undefined,
    private readonly feeBps: number,
  ) {}

  get available(): boolean {
    return this.treasurySender !== undefined;
  }

  /** Returns the refund transaction hash. */
  async refund(paymentId: string): Promise<string> {
    if (!this.treasurySender) throw new Error("no treasury key is configured: the refund is owed but cannot be sent");
    let payment = (await this.store.get(paymentId))!;
    if (payment.state === "refunded") return payment.refundTxHash!;
    if (payment.state === "settled") {
      if (!(await this.store.transition(paymentId, ["settled"], "refunding"))) return this.refund(paymentId);
      payment = (await this.store.get(paymentId))!;
    }
    if (payment.state !== "refunding") throw new Error(`payment ${paymentId} is ${payment.state}: nothing to refund`);
    if (payment.refundTxHash) {
      const receipt = await this.chain.publicClient.getTransactionReceipt({ hash: payment.refundTxHash as Hex }).catch(() => undefined);
      if (receipt?.status === "success") return this.record(paymentId, payment.refundTxHash);
      if (!receipt) throw new Error(`refund ${payment.refundTxHash} is not mined yet`);
    }
    const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [getAddress(payment.payer) as Address, payment.amount] });
    const receipt = await this.treasurySender.send({ to: this.chain.network.usdcAddress, data, gas: TRANSFER_GAS }, (hash) => this.store.setRefundTxHash(paymentId, hash));
    if (receipt.status !== "success") throw new Error(`refund transaction ${receipt.transactionHash} reverted`);
    return this.record(paymentId, receipt.transactionHash);
  }

  /** Resumes refunds a crash interrupted. */
  async resume(): Promise<void> {
    for (const p of await this.store.findInStates(["refunding"])) await this.refund(p.paymentId).catch(() => undefined);
  }

  private async record(paymentId: string, refundTxHash: string): Promise<string> {
    const payment = (await this.store.get(paymentId))!;
    const { fee, payout } = feeSplit(payment.amount, this.feeBps);
    const provider = `svc:${payment.skuId.split(".")[0]}`;
    await runInTransaction(this.ds, async (m) => {
      if (!(await this.store.transition(paymentId, ["refunding"], "refunded", { refundTxHash }, m))) return;
      if (payment.jobId) await this.jobs.move(payment.jobId, ["refunding"], "refunded", { finishTime: new Date(), leaseUntil: null }, m);
      await postEntry(m, "sku_refund", paymentId, [
        { account: ACCOUNTS.treasuryUsdc, amount: -payment.amount },
        { account: ACCOUNTS.feeRevenue, amount: fee },
        { account: ACCOUNTS.providerPayable(provider), amount: payout },
      ]);
    });
    return refundTxHash;
  }
}

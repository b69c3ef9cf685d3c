import { encodeFunctionData, getAddress, type Address } from "viem";
import type { DataSource } from "typeorm";
import { DEV_USDC } from "../chain/artifacts.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { NetworkInfo } from "../chain/networks.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ACCOUNTS, postEntry } from "../ledger/ledger.js";
import type { PaymentStore } from "./payment-store.js";
import { feeSplit } from "./payment-gate.js";

// Refunds a settled payment on-chain from the treasury (an async job that failed after settlement),
// then records it: payment `refunded` with the refund transaction, and the sale reversed in the ledger.

const TRANSFER_GAS = 100_000n;

export class Refunder {
  constructor(
    private readonly ds: DataSource,
    private readonly store: PaymentStore,
    private readonly network: NetworkInfo,
    private readonly treasurySender: TransactionSender | undefined,
    private readonly feeBps: number,
  ) {}

  get available(): boolean {
    return this.treasurySender !== undefined;
  }

  /** Returns the refund transaction hash. */
  async refund(paymentId: string, family: string): Promise<string> {
    if (!this.treasurySender) throw new Error("no treasury key is configured: the refund is owed but cannot be sent");
    const payment = (await this.store.get(paymentId))!;
    if (payment.state === "refunded") return payment.refundTxHash!;
    if (payment.state !== "settled") throw new Error(`payment ${paymentId} is ${payment.state}, not settled`);
    const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "transfer", args: [getAddress(payment.payer) as Address, payment.amount] });
    const receipt = await this.treasurySender.send({ to: this.network.usdcAddress, data, gas: TRANSFER_GAS });
    if (receipt.status !== "success") throw new Error(`refund transaction ${receipt.transactionHash} reverted`);
    const { fee, payout } = feeSplit(payment.amount, this.feeBps);
    await runInTransaction(this.ds, async (m) => {
      await this.store.transition(paymentId, ["settled"], "refunded", { refundTxHash: receipt.transactionHash }, m);
      await postEntry(m, "sku_refund", paymentId, [
        { account: ACCOUNTS.treasuryUsdc, amount: -payment.amount },
        { account: ACCOUNTS.feeRevenue, amount: fee },
        { account: ACCOUNTS.providerPayable(`svc:${family}`), amount: payout },
      ]);
    });
    return receipt.transactionHash;
  }
}

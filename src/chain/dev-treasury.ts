import { encodeFunctionData } from "viem";
import type { DataSource } from "typeorm";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ACCOUNTS, postEntry } from "../ledger/ledger.js";
import { DEV_USDC } from "./artifacts.js";
import type { ChainRuntime } from "./chain-runtime.js";
import type { TransactionSender } from "./tx-sender.js";

/** Test money the dev treasury is topped up to, so marketplace payouts can be paid on the dev chain. */
export const DEV_TREASURY_FLOAT = 1_000_000_000n; // 1000 USDC
export const DEV_FLOAT_ACCOUNT = "equity:dev_float";

/** Dev chain only: mints the treasury up to the float, recorded in the ledger like any other money. */
export async function fundDevTreasury(ds: DataSource, chain: ChainRuntime, faucet: TransactionSender, log: Logger): Promise<void> {
  const balance = (await chain.publicClient.readContract({ address: chain.network.usdcAddress, abi: DEV_USDC.abi, functionName: "balanceOf", args: [chain.treasury] })) as bigint;
  if (balance >= DEV_TREASURY_FLOAT / 10n) return;
  const amount = DEV_TREASURY_FLOAT - balance;
  const data = encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [chain.treasury, amount] });
  const receipt = await faucet.send({ to: chain.network.usdcAddress, data, gas: 100_000n });
  if (receipt.status !== "success") throw new Error(`dev treasury mint ${receipt.transactionHash} reverted`);
  await runInTransaction(ds, (m) =>
    postEntry(m, "dev_treasury_float", newId("float"), [
      { account: ACCOUNTS.treasuryUsdc, amount },
      { account: DEV_FLOAT_ACCOUNT, amount: -amount },
    ]),
  );
  log.info({ amount: amount.toString(), tx: receipt.transactionHash }, "dev treasury topped up with test USDC");
}

import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TransactionReceiptNotFoundError, type Hex, type PublicClient } from "viem";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";
import { startChain, type ChainRuntime } from "../../../src/chain/chain-runtime.js";
import { TransactionSender } from "../../../src/chain/tx-sender.js";

// A node may answer a broadcast a moment before it has mined the transaction (anvil does now and then):
// the sender's first receipt look-up then finds nothing. It looks again within milliseconds instead of
// waiting for its next poll, so a lone settlement does not pay a poll interval for that moment.

describe("TransactionSender receipt look-ups after a broadcast", function () {
  this.timeout(30_000);
  let chain: ChainRuntime;
  let dir: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-receipts-"));
    chain = await startChain(loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" }), createLogger("silent"));
  });
  after(async () => {
    await chain.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("finds the receipt of a transaction the node had not mined at the first look, long before the next poll", async () => {
    const looks = new Map<Hex, number>();
    // The node's first answer for each hash is "no receipt yet", as when it answers before mining.
    const client = {
      ...chain.publicClient,
      getTransactionReceipt: async (args: { hash: Hex }) => {
        const n = (looks.get(args.hash) ?? 0) + 1;
        looks.set(args.hash, n);
        if (n === 1) throw new TransactionReceiptNotFoundError({ hash: args.hash });
        return chain.publicClient.getTransactionReceipt(args);
      },
    } as PublicClient;
    // A poll interval far beyond the test's timeout: only the quick look-ups can find the receipt in time.
    const sender = new TransactionSender(client, chain.faucetAccount!, chain.chain, { resendAfterMs: 120_000, timeoutMs: 120_000, pollMs: 120_000, log: createLogger("silent") });
    const receipt = await sender.send({ to: chain.faucetAccount!.address, data: "0x", gas: 21_000n });
    expect(receipt.status).to.equal("success");
    expect(looks.get(receipt.transactionHash)).to.be.at.least(2);
  });
});

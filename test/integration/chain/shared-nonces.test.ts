import { expect } from "chai";
import type { DataSource } from "typeorm";
import type { Hex } from "viem";
import { publicClientFor, viemChain } from "../../../src/chain/chain-runtime.js";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { startDevChain, type DevChain } from "../../../src/chain/dev-chain.js";
import { NETWORKS } from "../../../src/chain/networks.js";
import { chainIdentity, TransactionSender } from "../../../src/chain/tx-sender.js";
import { ERC8004_TESTNET_IDENTITY_REGISTRY } from "../../../src/config.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { SharedNonceCounter } from "../../../src/platform/db/shared-nonces.js";
import { createLogger } from "../../../src/platform/log.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// Two senders of ONE key (as two server processes have), each with its own database pool, on one anvil:
// nonces come from the shared counter, so concurrent sends never collide; a nonce allocated by a process
// that died before sending it is filled, so the key does not stall behind the gap.

describe("transaction sender: one key shared by two processes through the database nonce counter", function () {
  this.timeout(120_000);
  const network = NETWORKS["base-sepolia"];
  const log = createLogger("silent");
  let dev: DevChain;
  let a: DataSource;
  let b: DataSource;

  before(async () => {
    dev = await startDevChain({ network, minter: devAccounts().faucet.address, identityRegistry: ERC8004_TESTNET_IDENTITY_REGISTRY, log });
    a = await openDataSource(testDatabaseConfig());
    b = await openDataSource(testDatabaseConfig());
  });
  after(async () => {
    await a?.destroy();
    await b?.destroy();
    await dev?.stop();
  });

  const senderOn = (ds: DataSource, resendAfterMs = 5_000) => {
    const chain = viemChain(network, dev.rpcUrl);
    const client = publicClientFor(chain, dev.rpcUrl, true);
    const account = devAccounts().treasury;
    const nonces = new SharedNonceCounter(ds, () => chainIdentity(client, chain.id), account.address, 60_000);
    return { sender: new TransactionSender(client, account, chain, { nonces, resendAfterMs, timeoutMs: 60_000, pollMs: 25, log }), client, nonces };
  };

  it("sends 80 transactions concurrently from two senders of one key: all mined, each nonce once", async () => {
    const one = senderOn(a);
    const two = senderOn(b);
    const to = devAccounts().faucet.address;
    const before = await one.client.getTransactionCount({ address: one.sender.address });
    const receipts = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? one : two).sender.send({ to, data: "0x", gas: 21_000n })));
    expect(receipts.every((r) => r.status === "success")).to.equal(true);
    const txs = await Promise.all(receipts.map((r) => one.client.getTransaction({ hash: r.transactionHash as Hex })));
    const nonces = txs.map((t) => t.nonce).sort((x, y) => x - y);
    expect(nonces).to.deep.equal(Array.from({ length: 80 }, (_, i) => before + i));
    expect(await one.client.getTransactionCount({ address: one.sender.address })).to.equal(before + 80);
  });

  it("hands each signed transaction's hash and nonce to beforeBroadcast before the node has it; a failing hook sends nothing", async () => {
    const { sender, client } = senderOn(a);
    const to = devAccounts().faucet.address;
    const seen: { hash: Hex; nonce: number; nodeHadIt: boolean }[] = [];
    const receipt = await sender.send({
      to,
      data: "0x",
      gas: 21_000n,
      beforeBroadcast: async (hash, nonce) => {
        const nodeHadIt = await client.getTransaction({ hash }).then(() => true, () => false);
        seen.push({ hash, nonce, nodeHadIt });
      },
    });
    expect(seen).to.have.length(1);
    expect(seen[0]!.nodeHadIt).to.equal(false);
    expect(receipt.transactionHash).to.equal(seen[0]!.hash);
    expect((await client.getTransaction({ hash: receipt.transactionHash })).nonce).to.equal(seen[0]!.nonce);

    const count = await client.getTransactionCount({ address: sender.address, blockTag: "pending" });
    let refusedHash: Hex | undefined;
    const refused = await sender
      .send({ to, data: "0x", gas: 21_000n, beforeBroadcast: async (hash) => {
          refusedHash = hash;
          throw new Error("database down");
        },
      })
      .then(() => "sent", (err: Error) => err.message);
    expect(refused).to.match(/not broadcast: database down/);
    expect(await client.getTransaction({ hash: refusedHash! }).then(() => true, () => false)).to.equal(false);
    expect(await client.getTransactionCount({ address: sender.address, blockTag: "pending" })).to.equal(count);
    // The nonce went back to the pool: the next send uses it, so the key does not stall.
    const next = await sender.send({ to, data: "0x", gas: 21_000n });
    expect((await client.getTransaction({ hash: next.transactionHash })).nonce).to.equal(count);
  });

  it("fills a gap left by a process that allocated nonces and died before sending them", async () => {
    const live = senderOn(a, 300);
    const dead = senderOn(b);
    const start = await live.client.getTransactionCount({ address: live.sender.address, blockTag: "pending" });
    // The dead process took two nonces from the shared counter and never sent them.
    expect(await dead.nonces.allocate(start)).to.equal(start);
    expect(await dead.nonces.allocate(start)).to.equal(start + 1);
    const receipt = await live.sender.send({ to: devAccounts().faucet.address, data: "0x", gas: 21_000n });
    expect(receipt.status).to.equal("success");
    const tx = await live.client.getTransaction({ hash: receipt.transactionHash });
    expect(tx.nonce).to.equal(start + 2);
    // The two gap nonces were filled with 0-value transfers to self.
    expect(await live.client.getTransactionCount({ address: live.sender.address })).to.equal(start + 3);
  });
});

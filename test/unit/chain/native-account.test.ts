import { expect } from "chai";
import { parseTransaction, recoverTransactionAddress, type TransactionSerializable } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { accountFromKey } from "../../../src/chain/native-account.js";

// Transactions signed on libsecp256k1 are byte for byte the ones viem's own account signs (RFC 6979, low s),
// for the transaction types the senders use and a legacy one, across keys and nonces; the signer recovers.

describe("accountFromKey: transactions signed on libsecp256k1", () => {
  it("signs exactly what viem signs, and the signature recovers to the account", async () => {
    for (let k = 0; k < 8; k++) {
      const key = generatePrivateKey();
      const ours = accountFromKey(key);
      const viems = privateKeyToAccount(key);
      expect(ours.address).to.equal(viems.address);
      const txs: TransactionSerializable[] = [
        { chainId: 84532, type: "eip1559", nonce: k * 7, to: viems.address, data: "0xdeadbeef", gas: 150_000n, maxFeePerGas: 2_000_000_000n + BigInt(k), maxPriorityFeePerGas: 1_000_000n },
        { chainId: 84532, type: "eip1559", nonce: k, to: viems.address, data: "0x", gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, value: 5n },
        { chainId: 8453, type: "legacy", nonce: k, to: viems.address, gas: 21_000n, gasPrice: 3n, value: 1n },
      ];
      for (const tx of txs) {
        const signed = await ours.signTransaction(tx);
        expect(signed).to.equal(await viems.signTransaction(tx));
        expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).to.equal(viems.address);
        expect(parseTransaction(signed).nonce).to.equal(tx.nonce);
      }
    }
  });

  it("keeps viem's message signing", async () => {
    const key = generatePrivateKey();
    expect(await accountFromKey(key).signMessage({ message: "svc" })).to.equal(await privateKeyToAccount(key).signMessage({ message: "svc" }));
  });
});

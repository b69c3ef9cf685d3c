import { expect } from "chai";
import { encodeAbiParameters, encodeEventTopics, pad, type Hex } from "viem";
import { SETTLEMENT_BATCHER } from "../../../src/chain/artifacts.js";
import { findSettlement, parseSettlementRef, revertText, settlementRef } from "../../../src/chain/settlement-logs.js";

// A payment's settlement reference and its item in a batch transaction's logs.

const TX = `0x${"ab".repeat(32)}` as Hex;
const TOKEN = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const BATCHER = "0xba7c000000000000000000000000000000000402";
const PAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const NONCE = pad("0x01", { size: 32 });

function itemLog(index: number, success: boolean, reason: Hex, address = BATCHER) {
  const topics = encodeEventTopics({ abi: SETTLEMENT_BATCHER.abi, eventName: "SettlementItem", args: { authorizer: PAYER, nonce: NONCE } as never }) as Hex[];
  const data = encodeAbiParameters([{ type: "uint256" }, { type: "bool" }, { type: "bytes" }], [BigInt(index), success, reason]);
  return { address, topics, data };
}

// Error(string) "ERC20: transfer amount exceeds balance"
const BALANCE_REVERT = ("0x08c379a0" +
  encodeAbiParameters([{ type: "string" }], ["ERC20: transfer amount exceeds balance"]).slice(2)) as Hex;

describe("settlement logs", () => {
  it("writes and reads settlement references with and without a batch index", () => {
    expect(settlementRef(TX, null)).to.equal(TX);
    expect(settlementRef(TX.toUpperCase().replace("0X", "0x"), 7)).to.equal(`${TX}:7`);
    expect(parseSettlementRef(`${TX}:7`)).to.deep.equal({ txHash: TX, batchIndex: 7 });
    expect(parseSettlementRef(TX)).to.deep.equal({ txHash: TX, batchIndex: null });
    expect(parseSettlementRef("seal_123")).to.deep.equal({ txHash: "seal_123", batchIndex: null });
  });

  it("finds an item's index and failure reason from the batcher's event, and only from the batcher's address when named", () => {
    const failed = findSettlement([itemLog(3, false, BALANCE_REVERT)], TOKEN, PAYER, NONCE, undefined, BATCHER);
    expect(failed).to.deep.equal({ used: false, transferred: false, batchIndex: 3, failure: "ERC20: transfer amount exceeds balance" });
    const ok = findSettlement([itemLog(2, true, "0x")], TOKEN, PAYER, NONCE, undefined, BATCHER);
    expect(ok).to.deep.equal({ used: false, transferred: false, batchIndex: 2 });
    const elsewhere = findSettlement([itemLog(2, true, "0x", "0x0000000000000000000000000000000000000bad")], TOKEN, PAYER, NONCE, undefined, BATCHER);
    expect(elsewhere.batchIndex).to.equal(null);
  });

  it("names a revert without a reason", () => {
    expect(revertText("0x")).to.equal("reverted without a reason");
    expect(revertText("0xdeadbeef")).to.contain("0xdeadbeef");
  });
});

import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { simpleMerkleRoot } from "../../../src/proof/merkle-root.js";

// The anchorer's root is OpenZeppelin SimpleMerkleTree's root (what `svc verify` and any third party rebuild),
// for any number of leaves, in any order and letter case; anything but bytes32 leaves is refused.

const leaf = () => `0x${randomBytes(32).toString("hex")}`;

describe("simpleMerkleRoot", () => {
  it("equals SimpleMerkleTree.of(...).root", () => {
    for (const n of [1, 2, 3, 4, 5, 7, 16, 31, 256]) {
      const leaves = Array.from({ length: n }, leaf);
      expect(simpleMerkleRoot(leaves), `${n} leaves`).to.equal(SimpleMerkleTree.of(leaves).root);
      expect(simpleMerkleRoot([...leaves].reverse().map((l) => l.toUpperCase().replace("0X", "0x")))).to.equal(SimpleMerkleTree.of(leaves).root);
    }
  });

  it("refuses an empty batch and leaves that are not bytes32", () => {
    expect(() => simpleMerkleRoot([])).to.throw(/at least one leaf/);
    expect(() => simpleMerkleRoot([leaf().slice(0, 40)])).to.throw(/bytes32/);
    expect(() => simpleMerkleRoot(["0x" + "g".repeat(64)])).to.throw(/bytes32/);
  });
});

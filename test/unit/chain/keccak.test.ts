import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { keccak_256 } from "@noble/hashes/sha3";
import { bytesToHex } from "viem";
import { keccak256, keccak256Hex } from "../../../src/chain/keccak.js";

// The js-sha3 keccak256 the paid path hashes with gives @noble/hashes' (viem's) digest for every input length,
// including the empty input and lengths around the 136-byte rate, where the padding changes blocks.

describe("keccak256 (js-sha3) against @noble/hashes", () => {
  it("hashes the empty input to Ethereum's well-known empty hash", () => {
    expect(keccak256Hex(new Uint8Array())).to.equal("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  });

  it("gives the same 32 bytes for inputs of 0 to 600 bytes", () => {
    for (let n = 0; n <= 600; n++) {
      const data = new Uint8Array(randomBytes(n));
      const want = keccak_256(data);
      expect(keccak256(data), `length ${n}`).to.deep.equal(want);
      expect(keccak256Hex(data), `length ${n}`).to.equal(bytesToHex(want));
    }
  });
});

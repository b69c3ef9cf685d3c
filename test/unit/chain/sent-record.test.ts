import { expect } from "chai";
import { parseSent, withSent } from "../../../src/chain/sent-outcome.js";

// The stored record of one send: re-sends keep their nonce; a nonce refused outright (the sender moved to a
// new one) is replaced, so the record always names the nonce a still-minable hash was signed with.

describe("stored send records", () => {
  it("keeps every hash once and the latest nonce; reads the legacy bare array", () => {
    let r = withSent(parseSent(null), "0x01", 7);
    r = withSent(r, "0x02", 7);
    r = withSent(r, "0x02", 7);
    expect(r).to.deep.equal({ nonce: 7, hashes: ["0x01", "0x02"] });
    // The node refused nonce 7 (nonce too low): the sender signed again with 9.
    expect(withSent(r, "0x03", 9)).to.deep.equal({ nonce: 9, hashes: ["0x01", "0x02", "0x03"] });
    expect(parseSent(JSON.stringify(["0x0a"]))).to.deep.equal({ hashes: ["0x0a"] });
  });
});

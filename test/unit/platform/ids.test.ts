import { expect } from "chai";
import { newId } from "../../../src/platform/ids.js";

// Ids come from a pooled secure random source: well-formed, unique, and every letter of the alphabet about
// equally likely (no modulo bias), across many refills of the pool.

describe("newId", () => {
  it("makes well-formed, unique ids with an even spread over the 36-letter alphabet", () => {
    const ids = Array.from({ length: 20_000 }, () => newId("x"));
    for (const id of ids.slice(0, 100)) expect(id).to.match(/^x_[0-9a-z]{20}$/);
    expect(new Set(ids).size).to.equal(ids.length);
    const counts = new Map<string, number>();
    for (const id of ids) for (const ch of id.slice(2)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).to.equal(36);
    const expected = (ids.length * 20) / 36;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).to.be.below(0.05);
    expect(newId("pay", 8)).to.match(/^pay_[0-9a-z]{8}$/);
  });
});

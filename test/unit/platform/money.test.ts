import { expect } from "chai";
import { AmountError, atomicToUsdNumber, atomicToUsdText, usdToAtomic } from "../../../src/platform/money.js";

describe("money", () => {
  it("parses USD text and numbers exactly", () => {
    expect(usdToAtomic("0.25")).to.equal(250000n);
    expect(usdToAtomic("99.0")).to.equal(99000000n);
    expect(usdToAtomic(0.01)).to.equal(10000n);
  });

  it("refuses a float carrying binary noise instead of rounding it silently", () => {
    expect(() => usdToAtomic(0.1 + 0.2)).to.throw(AmountError); // 0.30000000000000004
  });

  it("refuses more than 6 decimals, negatives, exponents and junk", () => {
    for (const bad of ["0.0000001", "-1", "1e3", "", "abc", " 1.2.3", -0.5, Number.NaN, Infinity, 1e-7]) {
      expect(() => usdToAtomic(bad as never), String(bad)).to.throw(AmountError);
    }
  });

  it("renders atomic units without trailing zeros", () => {
    expect(atomicToUsdText(250000n)).to.equal("0.25");
    expect(atomicToUsdText("99000000")).to.equal("99");
    expect(atomicToUsdText(1n)).to.equal("0.000001");
    expect(atomicToUsdText(-1500000n)).to.equal("-1.5");
    expect(atomicToUsdNumber(10000n)).to.equal(0.01);
  });

  it("round-trips every amount of cents up to 1000 USD", () => {
    for (let cents = 0; cents <= 100_000; cents += 7) {
      const atomic = BigInt(cents) * 10_000n;
      expect(usdToAtomic(atomicToUsdNumber(atomic))).to.equal(atomic);
    }
  });
});

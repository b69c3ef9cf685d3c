import { expect } from "chai";
import { lmsrCost, payoutFor, sharesForStake, sharesText, subsidyFor, yesProbability } from "../../../src/markets/lmsr.js";
import { stakeFee } from "../../../src/markets/tiers.js";

// The market maker against the textbook LMSR, computed here independently with the naive formulas.

const naiveCost = (qy: number, qn: number, b: number) => b * Math.log(Math.exp(qy / b) + Math.exp(qn / b));
const naivePrice = (qy: number, qn: number, b: number) => Math.exp(qy / b) / (Math.exp(qy / b) + Math.exp(qn / b));

describe("markets: LMSR market maker", () => {
  it("prices yes at e^(qy/b) / (e^(qy/b) + e^(qn/b))", () => {
    expect(yesProbability(0n, 0n, 10_000n)).to.equal(0.5);
    for (const [qy, qn, b] of [[1234.567, 0, 10_000], [0, 5000, 2000], [70_000.5, 69_000.25, 50_000]] as const) {
      const p = yesProbability(BigInt(Math.round(qy * 1000)), BigInt(Math.round(qn * 1000)), BigInt(b));
      expect(p).to.be.closeTo(naivePrice(qy, qn, b), 1e-12);
    }
  });

  it("a stake buys the shares whose cost is the stake, rounded down to a milli-share", () => {
    const b = 10_000n;
    const cases: [bigint, bigint, bigint][] = [[0n, 0n, 1990n], [2_500_123n, 0n, 4975n], [0n, 9_000_000n, 10_000n], [1_000n, 2_000n, 99_500n]];
    for (const [qSide, qOther, stake] of cases) {
      const milli = sharesForStake(stake, qSide, qOther, b);
      const before = naiveCost(Number(qSide) / 1000, Number(qOther) / 1000, Number(b));
      const after = naiveCost(Number(qSide + milli) / 1000, Number(qOther) / 1000, Number(b));
      const afterOneMore = naiveCost(Number(qSide + milli + 1n) / 1000, Number(qOther) / 1000, Number(b));
      expect(after - before).to.be.at.most(Number(stake) + 1e-6);
      expect(afterOneMore - before).to.be.greaterThan(Number(stake) - 1e-6);
      expect(lmsrCost(qSide + milli, qOther, b) - lmsrCost(qSide, qOther, b)).to.be.closeTo(after - before, 1e-6);
    }
  });

  it("stays finite where the naive exponentials overflow", () => {
    const b = 1_000n;
    const milli = sharesForStake(50_000n, 0n, 2_000_000_000n, b); // q_no is 2M shares: yes is nearly free
    expect(Number.isFinite(Number(milli))).to.equal(true);
    expect(milli > 2_000_000_000n).to.equal(true);
    expect(yesProbability(0n, 2_000_000_000n, b)).to.equal(0);
  });

  it("funds the maker's worst case b ln 2, pays floor(shares) and rounds the fee up", () => {
    expect(subsidyFor(10_000n)).to.equal(6932n);
    expect(payoutFor(2_345_999n)).to.equal(2345n);
    expect(sharesText(2_345_009n)).to.equal("2345.009");
    expect(stakeFee(2000n)).to.equal(10n);
    expect(stakeFee(100n)).to.equal(1n);
    expect(stakeFee(10_001n)).to.equal(51n);
  });

  it("the pool plus the subsidy always covers the winners", () => {
    const b = 5_000n;
    let qy = 0n;
    let qn = 0n;
    let pool = subsidyFor(b);
    for (let i = 0; i < 200; i++) {
      const stake = BigInt(100 + ((i * 7919) % 20_000));
      if (i % 3 === 0) qn += sharesForStake(stake, qn, qy, b);
      else qy += sharesForStake(stake, qy, qn, b);
      pool += stake;
    }
    expect(pool >= payoutFor(qy), "pool covers yes").to.equal(true);
    expect(pool >= payoutFor(qn), "pool covers no").to.equal(true);
  });
});

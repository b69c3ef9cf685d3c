import { expect } from "chai";
import { applyFee, quoteFee, type FeeInputs } from "../../../src/fees/fee-engine.js";

const base: FeeInputs = {
  providerBadge: "none",
  requesterBadge: "none",
  completedPairJobs: 1,
  buyerTenureDays: 0,
  requesterRegistered: true,
  providerRegistered: true,
  providerInternal: false,
  requesterInternal: false,
};

describe("fee engine (spec: Fees)", () => {
  // [case, overrides, dynamic bps]
  const CASES: [string, Partial<FeeInputs>, number][] = [
    ["no adjustment", {}, 2000],
    ["provider gold -400", { providerBadge: "gold" }, 1600],
    ["provider silver -200", { providerBadge: "silver" }, 1800],
    ["provider bronze -100", { providerBadge: "bronze" }, 1900],
    ["requester gold -200", { requesterBadge: "gold" }, 1800],
    ["requester silver -100", { requesterBadge: "silver" }, 1900],
    ["requester bronze -50", { requesterBadge: "bronze" }, 1950],
    ["first-time pair +100", { completedPairJobs: 0 }, 2100],
    ["repeat pair 2: -100", { completedPairJobs: 2 }, 1900],
    ["repeat pair 4 stays at the 2 tier", { completedPairJobs: 4 }, 1900],
    ["repeat pair 5: -200", { completedPairJobs: 5 }, 1800],
    ["repeat pair 10: -300", { completedPairJobs: 10 }, 1700],
    ["tenure 29 days: none", { buyerTenureDays: 29 }, 2000],
    ["tenure 30 days: -100", { buyerTenureDays: 30 }, 1900],
    ["tenure 90 days: -200", { buyerTenureDays: 90 }, 1800],
    ["unregistered requester +300", { requesterRegistered: false }, 2300],
    ["unregistered provider +200", { providerRegistered: false }, 2200],
    ["floor: every discount at once (raw 900) stops at 1000", { providerBadge: "gold", requesterBadge: "gold", completedPairJobs: 10, buyerTenureDays: 90 }, 1000],
    ["just above the floor: gold/gold, 5 repeat jobs, 90 days (raw 1000)", { providerBadge: "gold", requesterBadge: "gold", completedPairJobs: 5, buyerTenureDays: 90 }, 1000],
    ["a combination inside the band", { providerBadge: "silver", requesterBadge: "bronze", completedPairJobs: 2, buyerTenureDays: 30 }, 1550],
    ["ceiling: every surcharge at once stops at 2500", { requesterRegistered: false, providerRegistered: false, completedPairJobs: 0 }, 2500],
    ["internal provider: discounts dropped, surcharges kept", { providerInternal: true, providerBadge: "gold", completedPairJobs: 0 }, 2100],
    ["internal requester: no discount at all", { requesterInternal: true, requesterBadge: "gold", buyerTenureDays: 90 }, 2000],
  ];
  for (const [name, o, dynamic] of CASES) {
    it(name, () => {
      const q = quoteFee({ ...base, ...o });
      expect(q.dynamicBps).to.equal(dynamic);
      expect(q.chargedBps).to.equal(2000); // shadow: the service rate is charged
      expect(q.mode).to.equal("shadow");
    });
  }

  it("gives the service rate when any trust input is unavailable, and says which", () => {
    for (const k of ["providerBadge", "requesterBadge", "completedPairJobs", "buyerTenureDays"] as const) {
      const q = quoteFee({ ...base, providerBadge: "gold", [k]: undefined });
      expect(q.dynamicBps, k).to.equal(2000);
      expect(q.unavailable).to.have.length(1);
    }
  });

  it("takes the fee from the provider's share, floored to the atomic unit", () => {
    expect(applyFee(10_000n, 2000)).to.deep.equal({ fee: 2000n, net: 8000n });
    expect(applyFee(1n, 2000)).to.deep.equal({ fee: 0n, net: 1n });
    expect(applyFee(123_457n, 1950)).to.deep.equal({ fee: 24074n, net: 99383n });
  });
});

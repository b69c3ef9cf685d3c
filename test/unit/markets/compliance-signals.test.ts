import { expect } from "chai";
import { complianceDataset, findProtocol, knownProtocols, scoreProtocol } from "../../../src/markets/compliance.js";
import { deriveSignals } from "../../../src/markets/signals.js";
import { MarketEntity, MarketPositionEntity } from "../../../src/markets/markets.entity.js";
import { sharesForStake, yesProbability } from "../../../src/markets/lmsr.js";

describe("markets: compliance scores from the shipped protocol data", () => {
  it("loads the dataset and finds protocols by id, name or alias, case and punctuation aside", () => {
    expect(knownProtocols()).to.include.members(["aave", "uniswap", "curve", "ondo"]);
    expect(findProtocol("Aave V3")?.id).to.equal("aave");
    expect(findProtocol("  SKY ")?.id).to.equal("makerdao");
    expect(findProtocol("curve-dex")?.id).to.equal("curve");
    expect(findProtocol("no-such-protocol")).to.equal(undefined);
    expect(complianceDataset().asOf).to.match(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("sums the documented factor points and maps the score to the tail risk", () => {
    const now = new Date("2026-11-22T00:00:00Z");
    const uni = scoreProtocol(findProtocol("uniswap")!, now);
    // audits 3+ -> 3, immutable -> 0, no oracle -> 0, 8 years -> 1, no incidents -> 0, low concentration -> 2
    expect(uni.risk_score).to.equal(6);
    expect(uni.tail_risk_pct).to.equal(Math.round((0.5 + 24.5 * 0.06 ** 2) * 100) / 100);
    const curve = scoreProtocol(findProtocol("curve")!, now);
    // 3 + 5 + 8 + 1 + min(20, 3 + 10) + 5
    expect(curve.risk_score).to.equal(35);
    expect(curve.factor_details.map((f) => f.name)).to.deep.equal(["audits", "admin_key", "oracle_design", "age", "incidents", "tvl_concentration"]);
    // An incident of the last 24 months weighs 4 more: the same facts in mid-2025 (2023-07 is 23 months old).
    const curve2025 = scoreProtocol(findProtocol("curve")!, new Date("2025-06-01T00:00:00Z"));
    expect(curve2025.factor_details.find((f) => f.name === "incidents")!.points).to.equal(17);
    const ondo = scoreProtocol(findProtocol("ondo")!, now);
    // 7 + 20 + 15 + 4 (3.8 years) + 0 + 10
    expect(ondo.risk_score).to.equal(56);
    for (const s of [uni, curve, ondo]) expect(s.risk_score).to.equal(s.factor_details.reduce((t, f) => t + f.points, 0));
  });
});

describe("markets: signals derived from price movements", () => {
  const b = 10_000n;
  const now = new Date("2026-11-22T12:00:00Z");
  const market = (id: string, category: string, qYes: bigint, qNo: bigint, extra: Partial<MarketEntity> = {}) =>
    Object.assign(new MarketEntity(), { marketId: id, title: `Market ${id}`, category, state: "open", outcome: null, liquidityB: b, qYes, qNo, yesStake: 0n, noStake: 0n, closeTime: new Date(now.getTime() + 86_400_000), resolveTime: null, ...extra });
  const position = (marketId: string, agentId: string, at: Date, stake: bigint, after: number) =>
    Object.assign(new MarketPositionEntity(), { marketId, agentId, createTime: at, stake, yesProbAfter: after, outcome: "yes" });

  it("reports a shift of 5 points or more in the window, with the documented confidence, and nothing for a flat market", () => {
    const q = sharesForStake(3000n, 0n, 0n, b);
    const moved = market("m1", "defi", q, 0n);
    const p = yesProbability(q, 0n, b);
    const flat = market("m2", "macro", 100_000n, 0n);
    const positions = new Map([
      ["m1", [position("m1", "a1", new Date(now.getTime() - 3600_000), 3000n, p)]],
      ["m2", [position("m2", "a1", new Date(now.getTime() - 3600_000), 10n, yesProbability(100_000n, 0n, b))]],
    ]);
    const signals = deriveSignals([moved, flat], positions, now);
    expect(signals).to.have.length(1);
    const s = signals[0]!;
    expect(s).to.include({ signal_type: "probability_shift", market_id: "m1", category: "defi" });
    expect(s.change).to.be.closeTo(p - 0.5, 1e-4);
    expect(s.confidence).to.be.closeTo(Math.min(1, (p - 0.5) / 0.25) * (1 - Math.exp(-3000 / 10_000)), 1e-4);
    expect(s.title).to.contain("yes up");
  });

  it("measures the shift from the price when the window began, and reports resolutions", () => {
    const q = sharesForStake(20_000n, 0n, 0n, b);
    const p = yesProbability(q, 0n, b);
    const old = position("m3", "a1", new Date(now.getTime() - 48 * 3600_000), 19_000n, p - 0.001);
    const recent = position("m3", "a2", new Date(now.getTime() - 600_000), 1000n, p);
    const signals = deriveSignals([market("m3", "crypto", q, 0n)], new Map([["m3", [recent, old]]]), now);
    expect(signals.filter((s) => s.signal_type === "probability_shift")).to.have.length(0);
    const resolved = market("m4", "rwa", 0n, 0n, { state: "resolved", outcome: "no", resolveTime: new Date(now.getTime() - 3600_000) });
    const [r] = deriveSignals([resolved], new Map(), now);
    expect(r).to.include({ signal_type: "market_resolved", confidence: 1, category: "rwa" });
  });
});

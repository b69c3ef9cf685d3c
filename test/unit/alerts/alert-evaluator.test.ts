import { expect } from "chai";
import { conditionMet, evaluate, readingOf, type AlertRule, type Reading } from "../../../src/alerts/alert-evaluator.js";

const now = new Date("2026-11-22T12:00:00.000Z");
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const ok = (price: string, dataAge = 0): Reading => ({ ok: true, price, dataTime: ago(dataAge), readAt: now, endpoint: "https://venue/ticker", venueTime: null });
const failing: Reading = { ok: false, error: "coinbase: HTTP 503", readAt: now };
const rule = (r: Partial<AlertRule> = {}): AlertRule => ({ state: "armed", condition: "above", threshold: "100", referencePrice: null, maxAgeSeconds: 60, lastDataTime: now, ...r });

describe("price alert evaluation", () => {
  it("above and below include the threshold; prices compare exactly as decimals", () => {
    expect(conditionMet("above", "100", null, "100.00").met).to.equal(true);
    expect(conditionMet("above", "100", null, "99.999999999999999999").met).to.equal(false);
    expect(conditionMet("below", "0.1", null, "0.10000").met).to.equal(true);
    expect(conditionMet("below", "0.1", null, "0.1000000001").met).to.equal(false);
  });

  it("pct-move measures the move from the reference in either direction", () => {
    expect(conditionMet("pct-move", "5", "200", "210").met).to.equal(true);
    expect(conditionMet("pct-move", "5", "200", "190").met).to.equal(true);
    const small = conditionMet("pct-move", "5", "200", "209.99");
    expect(small.met).to.equal(false);
    expect(small.note).to.contain("moved 4.995% from the reference 200");
  });

  it("fires, stays armed, or goes stale on old data", () => {
    expect(evaluate(rule(), ok("101"), now).state).to.equal("fired");
    expect(evaluate(rule(), ok("99"), now).state).to.equal("armed");
    const stale = evaluate(rule(), ok("101", 61), now);
    expect(stale.state).to.equal("stale");
    expect(stale.note).to.contain("61 s old, more than the 60 s allowed");
    expect(evaluate(rule({ state: "stale" }), ok("99", 5), now).state).to.equal("armed");
  });

  it("a failing venue keeps the state while the last data is recent, and makes it stale after the max age", () => {
    expect(evaluate(rule({ lastDataTime: ago(30) }), failing, now)).to.include({ state: "armed" });
    const stale = evaluate(rule({ lastDataTime: ago(90) }), failing, now);
    expect(stale.state).to.equal("stale");
    expect(stale.note).to.contain("the venue is failing (coinbase: HTTP 503)");
    expect(evaluate(rule({ lastDataTime: null }), failing, now).state).to.equal("stale");
  });

  it("fired is final", () => {
    expect(evaluate(rule({ state: "fired" }), ok("1"), now).state).to.equal("fired");
    expect(evaluate(rule({ state: "fired" }), failing, now).state).to.equal("fired");
  });

  it("dates data by the venue's quote time when it gives a valid one, else by the read time", () => {
    const q = { venue: "coinbase" as const, venueSymbol: "BTC-USD", price: "1", bid: null, ask: null, endpoint: "e" };
    expect(readingOf({ ...q, venueTime: ago(10).toISOString() }, now)).to.deep.include({ dataTime: ago(10) });
    expect(readingOf({ ...q, venueTime: null }, now)).to.deep.include({ dataTime: now });
    expect(readingOf({ ...q, venueTime: "garbage" }, now)).to.deep.include({ dataTime: now });
    expect(readingOf({ ...q, venueTime: new Date(now.getTime() + 60_000).toISOString() }, now)).to.deep.include({ dataTime: now });
  });
});

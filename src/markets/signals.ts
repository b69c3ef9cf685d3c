import type { MarketEntity, MarketPositionEntity } from "./markets.entity.js";
import { yesProbability } from "./lmsr.js";

// Signals are derived at read time from the markets' own price movements and stakes (nothing stored,
// nothing canned). Over the last WINDOW_HOURS:
//   probability_shift  an open market whose yes probability moved by SHIFT_MIN or more since the window
//                      began (the price after the last stake before it, or the opening 0.5).
//                      confidence = min(1, |change| / 0.25) * (1 - e^(-V/b)), V = stakes after fees in the window
//   strong_consensus   an open market priced at CONSENSUS_MIN or more on one side, with stakes from at least
//                      3 distinct agents and a stake in the window.
//                      confidence = 2 |p_yes - 0.5| * (1 - e^(-T/b)), T = all stakes after fees
//   market_resolved    a market resolved in the last RESOLVED_DAYS days; confidence 1 (the operator's resolution)
// Newest first (a signal's time is its last stake, or the resolution).

export const WINDOW_HOURS = 24;
export const SHIFT_MIN = 0.05;
export const CONSENSUS_MIN = 0.85;
export const RESOLVED_DAYS = 7;

export interface DerivedSignal {
  signal_type: "probability_shift" | "strong_consensus" | "market_resolved";
  title: string;
  confidence: number;
  category: string;
  create_time: Date;
  market_id: string;
  yes_probability: number;
  change: number;
  basis: string;
}

const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places;
const pct = (p: number) => `${(p * 100).toFixed(1)}%`;

/** Signals of `markets`, given each market's positions (any order). */
export function deriveSignals(markets: MarketEntity[], positions: Map<string, MarketPositionEntity[]>, now: Date): DerivedSignal[] {
  const start = new Date(now.getTime() - WINDOW_HOURS * 3600_000);
  const out: DerivedSignal[] = [];
  for (const market of markets) {
    const b = Number(market.liquidityB);
    const pNow = yesProbability(market.qYes, market.qNo, market.liquidityB);
    const all = [...(positions.get(market.marketId) ?? [])].sort((x, y) => x.createTime.getTime() - y.createTime.getTime());
    if (market.state === "resolved") {
      if (market.resolveTime && now.getTime() - market.resolveTime.getTime() <= RESOLVED_DAYS * 86_400_000) {
        out.push({
          signal_type: "market_resolved",
          title: `${market.title}: resolved ${market.outcome}`,
          confidence: 1,
          category: market.category,
          create_time: market.resolveTime,
          market_id: market.marketId,
          yes_probability: round(pNow),
          change: 0,
          basis: `resolved by the operator at ${market.resolveTime.toISOString()}; the last price was ${pct(pNow)} yes`,
        });
      }
      continue;
    }
    const inWindow = all.filter((p) => p.createTime >= start && p.createTime <= now);
    if (!inWindow.length || market.closeTime <= start) continue;
    const before = all.filter((p) => p.createTime < start).at(-1);
    const pStart = before ? before.yesProbAfter : 0.5;
    const change = pNow - pStart;
    const last = inWindow.at(-1)!.createTime;
    const windowVolume = inWindow.reduce((s, p) => s + Number(p.stake), 0);
    if (Math.abs(change) >= SHIFT_MIN) {
      out.push({
        signal_type: "probability_shift",
        title: `${market.title}: yes ${change > 0 ? "up" : "down"} ${(Math.abs(change) * 100).toFixed(1)} points to ${pct(pNow)} in ${WINDOW_HOURS}h`,
        confidence: round(Math.min(1, Math.abs(change) / 0.25) * (1 - Math.exp(-windowVolume / b))),
        category: market.category,
        create_time: last,
        market_id: market.marketId,
        yes_probability: round(pNow),
        change: round(change),
        basis: `LMSR price moved from ${pct(pStart)} to ${pct(pNow)} on ${inWindow.length} stakes of ${windowVolume} sats (b = ${b})`,
      });
    }
    const agents = new Set(all.map((p) => p.agentId));
    const side = pNow >= 0.5 ? "yes" : "no";
    if (Math.max(pNow, 1 - pNow) >= CONSENSUS_MIN && agents.size >= 3) {
      const total = Number(market.yesStake + market.noStake);
      out.push({
        signal_type: "strong_consensus",
        title: `${market.title}: consensus ${side} at ${pct(side === "yes" ? pNow : 1 - pNow)}`,
        confidence: round(2 * Math.abs(pNow - 0.5) * (1 - Math.exp(-total / b))),
        category: market.category,
        create_time: last,
        market_id: market.marketId,
        yes_probability: round(pNow),
        change: round(change),
        basis: `${agents.size} agents staked ${total} sats; LMSR price ${pct(pNow)} yes (b = ${b})`,
      });
    }
  }
  return out.sort((x, y) => y.create_time.getTime() - x.create_time.getTime() || x.market_id.localeCompare(y.market_id));
}

import type { EntityManager } from "typeorm";
import { forUpdate } from "../platform/db/locking.js";
import { newId } from "../platform/ids.js";
import { errors } from "../platform/rpc/errors.js";
import { payoutFor, sharesForStake, subsidyFor, yesProbability } from "./lmsr.js";
import { MarketEcashReceiptEntity, MarketEntity, MarketFleetMemberEntity, MarketPositionEntity } from "./markets.entity.js";
import { bookResolution, bookStake, fundMarket, heldSats, MARKETS_ACCOUNTS } from "./markets-ledger.js";
import { standingOf } from "./subscriptions.js";
import { MAX_STAKE_SATS, MIN_STAKE_SATS, REVENUE_SHARE_BPS, stakeFee } from "./tiers.js";

// The market book: creating a market (its subsidy funded), placing a stake (LMSR shares bought, the
// market's row locked so stakes on one market apply one at a time), and resolving (winners paid the
// floor of their shares, the maker keeping the rest). Each runs inside the caller's transaction, the
// records and the journal entry together.

export interface NewMarket {
  title: string;
  description: string;
  category: string;
  closeTime: Date;
  liquidityB: bigint;
}

export async function createMarket(m: EntityManager, n: NewMarket, now: Date): Promise<MarketEntity> {
  const market = Object.assign(new MarketEntity(), {
    marketId: newId("mkt"),
    title: n.title,
    description: n.description,
    category: n.category,
    state: "open" as const,
    outcome: null,
    liquidityB: n.liquidityB,
    subsidy: subsidyFor(n.liquidityB),
    qYes: 0n,
    qNo: 0n,
    yesStake: 0n,
    noStake: 0n,
    volume: 0n,
    positionsCount: 0,
    closeTime: n.closeTime,
    createTime: now,
    resolveTime: null,
  });
  await m.insert(MarketEntity, market);
  await fundMarket(m, market.marketId, market.subsidy);
  return market;
}

export interface StakeOrder {
  marketId: string;
  agentId: string;
  outcome: "yes" | "no";
  /** What was paid (stake + fee), sats. */
  paid: bigint;
  paidWith: "ecash" | "balance";
  redemption?: { redemptionId: string; mint: string };
}

export function checkStakeSize(paid: bigint): void {
  if (paid < MIN_STAKE_SATS || paid > MAX_STAKE_SATS) {
    throw errors.invalidArgument("invalid_stake", `a stake is ${MIN_STAKE_SATS} to ${MAX_STAKE_SATS} sats (this one is ${paid})`, [{ field: "stake_sats", description: "out of bounds" }]);
  }
}

/** Refuses a missing market or one that no longer trades. */
export function checkTrading(market: MarketEntity | null, marketId: string, now: Date): MarketEntity {
  if (!market) throw errors.notFound("market_not_found", `no market ${marketId}`);
  if (market.state === "resolved") throw errors.failedPrecondition("market_resolved", `market ${marketId} is resolved (${market.outcome}); it takes no more stakes`);
  if (market.closeTime <= now) throw errors.failedPrecondition("market_closed", `market ${marketId} closed for trading at ${market.closeTime.toISOString()}`);
  return market;
}

/** The market's row, locked (inside a transaction); refuses a market that no longer trades. */
export async function lockOpenMarket(m: EntityManager, marketId: string, now: Date): Promise<MarketEntity> {
  return checkTrading(await m.findOne(MarketEntity, { where: { marketId }, ...forUpdate(m) }), marketId, now);
}

/** Places a stake; returns the position. */
export async function placeStake(m: EntityManager, o: StakeOrder, now: Date): Promise<MarketPositionEntity> {
  checkStakeSize(o.paid);
  const market = await lockOpenMarket(m, o.marketId, now);
  const fee = stakeFee(o.paid);
  const stake = o.paid - fee;
  // Revenue share: part of the fee goes to the payer's fleet operator while it holds the Operator tier.
  const member = await m.findOneBy(MarketFleetMemberEntity, { agentId: o.agentId });
  const operatorActive = member ? (await standingOf(m, member.operatorAgentId, now)).tier === "operator" : false;
  const feeShare = member && operatorActive ? (fee * BigInt(REVENUE_SHARE_BPS)) / 10_000n : 0n;
  const yes = o.outcome === "yes";
  const shares = sharesForStake(stake, yes ? market.qYes : market.qNo, yes ? market.qNo : market.qYes, market.liquidityB);
  const before = yesProbability(market.qYes, market.qNo, market.liquidityB);
  const qYes = yes ? market.qYes + shares : market.qYes;
  const qNo = yes ? market.qNo : market.qNo + shares;
  const position = Object.assign(new MarketPositionEntity(), {
    positionId: newId("pos"),
    marketId: market.marketId,
    agentId: o.agentId,
    outcome: o.outcome,
    paid: o.paid,
    fee,
    feeShare,
    fleetOperatorId: feeShare > 0n ? member!.operatorAgentId : null,
    stake,
    shares,
    yesProbBefore: before,
    yesProbAfter: yesProbability(qYes, qNo, market.liquidityB),
    paidWith: o.paidWith,
    redemptionId: o.redemption?.redemptionId ?? null,
    state: "open" as const,
    payout: 0n,
    createTime: now,
  });
  await m.insert(MarketPositionEntity, position);
  await m.update(MarketEntity, { marketId: market.marketId }, {
    qYes,
    qNo,
    yesStake: yes ? market.yesStake + stake : market.yesStake,
    noStake: yes ? market.noStake : market.noStake + stake,
    volume: market.volume + o.paid,
    positionsCount: market.positionsCount + 1,
  });
  if (o.redemption) {
    await m.insert(MarketEcashReceiptEntity, { redemptionId: o.redemption.redemptionId, agentId: o.agentId, mint: o.redemption.mint, amount: o.paid, purpose: "stake", appliedTo: position.positionId, createTime: now });
  }
  await bookStake(m, { positionId: position.positionId, marketId: market.marketId, agentId: o.agentId, paid: o.paid, fee, feeShare, fleetOperatorId: position.fleetOperatorId, stake, paidWith: o.paidWith });
  return position;
}

export interface Resolution {
  market: MarketEntity;
  payoutsCount: number;
  payoutsSats: bigint;
  makerResult: bigint;
}

/** Resolves a market: every winning position is paid floor(shares) sats to its agent's markets balance. */
export async function resolveMarket(m: EntityManager, marketId: string, outcome: "yes" | "no", now: Date): Promise<Resolution> {
  const market = await m.findOne(MarketEntity, { where: { marketId }, ...forUpdate(m) });
  if (!market) throw errors.notFound("market_not_found", `no market ${marketId}`);
  if (market.state === "resolved") throw errors.failedPrecondition("market_resolved", `market ${marketId} is already resolved (${market.outcome})`);
  const positions = await m.find(MarketPositionEntity, { where: { marketId }, order: { createTime: "ASC", positionId: "ASC" } });
  const payouts = new Map<string, bigint>();
  let count = 0;
  let total = 0n;
  for (const p of positions) {
    const won = p.outcome === outcome;
    const payout = won ? payoutFor(p.shares) : 0n;
    await m.update(MarketPositionEntity, { positionId: p.positionId }, { state: won ? "won" : "lost", payout });
    if (won && payout > 0n) {
      payouts.set(p.agentId, (payouts.get(p.agentId) ?? 0n) + payout);
      count++;
      total += payout;
    }
  }
  const pool = await heldSats(m, MARKETS_ACCOUNTS.pool(marketId));
  await m.update(MarketEntity, { marketId }, { state: "resolved", outcome, resolveTime: now });
  await bookResolution(m, marketId, pool, payouts);
  return { market: Object.assign(market, { state: "resolved", outcome, resolveTime: now }), payoutsCount: count, payoutsSats: total, makerResult: pool - total };
}

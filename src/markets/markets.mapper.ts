import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  FleetMemberSchema,
  FleetSchema,
  MarketSchema,
  PositionSchema,
  SubscriptionSchema,
  type Fleet,
  type Market,
  type Position,
  type Subscription,
} from "../../gen/svc/markets/v1/markets_service_pb.js";
import type { AgentEntity } from "../registry/agent.entity.js";
import { sharesText, subsidyFor, yesProbability } from "./lmsr.js";
import type { MarketEntity, MarketFleetMemberEntity, MarketPositionEntity, MarketSubscriptionEntity } from "./markets.entity.js";
import { REVENUE_SHARE_BPS, STAKE_FEE_BPS } from "./tiers.js";

// Markets records as the API shows them.

export type MarketStatus = "open" | "closed" | "resolved";

export function marketStatus(m: MarketEntity, now: Date): MarketStatus {
  if (m.state === "resolved") return "resolved";
  return m.closeTime > now ? "open" : "closed";
}

export function toMarketProto(m: MarketEntity, now: Date): Market {
  const p = yesProbability(m.qYes, m.qNo, m.liquidityB);
  return create(MarketSchema, {
    marketId: m.marketId,
    title: m.title,
    category: m.category,
    status: marketStatus(m, now),
    yesProbability: p,
    noProbability: 1 - p,
    yesStakeSats: m.yesStake,
    noStakeSats: m.noStake,
    closeTime: timestampFromDate(m.closeTime),
    outcome: m.outcome ?? "",
    description: m.description,
    liquidityBSats: m.liquidityB,
    yesShares: sharesText(m.qYes),
    noShares: sharesText(m.qNo),
    feeBps: STAKE_FEE_BPS,
    createTime: timestampFromDate(m.createTime),
    resolveTime: m.resolveTime ? timestampFromDate(m.resolveTime) : undefined,
    subsidySats: m.subsidy ?? subsidyFor(m.liquidityB),
    volumeSats: m.volume,
    positionsCount: m.positionsCount,
    marketMaker: "lmsr",
  });
}

export function toPositionProto(p: MarketPositionEntity): Position {
  return create(PositionSchema, {
    positionId: p.positionId,
    marketId: p.marketId,
    outcome: p.outcome,
    stakeSats: p.stake,
    feeSats: p.fee,
    shares: sharesText(p.shares),
    payoutSats: p.payout,
    state: p.state,
    createTime: timestampFromDate(p.createTime),
  });
}

export function toSubscriptionProto(s: MarketSubscriptionEntity): Subscription {
  return create(SubscriptionSchema, {
    subscriptionId: s.subscriptionId,
    plan: s.plan,
    startTime: timestampFromDate(s.startTime),
    endTime: timestampFromDate(s.endTime),
    priceSats: s.priceSats,
    priceAmount: s.priceAtomic === null ? "" : s.priceAtomic.toString(),
    paidWith: s.paidWith,
  });
}

export function toFleetProto(operator: AgentEntity, members: { row: MarketFleetMemberEntity; agent: AgentEntity | null }[], tierActive: boolean): Fleet {
  return create(FleetSchema, {
    operatorAgentId: operator.agentId,
    operatorName: operator.name,
    operatorTierActive: tierActive,
    revenueShareBps: REVENUE_SHARE_BPS,
    members: members.map(({ row, agent }) => create(FleetMemberSchema, { agentId: row.agentId, name: agent?.name ?? "", joinTime: timestampFromDate(row.joinTime) })),
  });
}

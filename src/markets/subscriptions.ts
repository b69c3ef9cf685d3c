import { MoreThan, type EntityManager } from "typeorm";
import { MarketSubscriptionEntity } from "./markets.entity.js";
import { tierOf, type Plan, type Tier } from "./tiers.js";

// Which plans an agent holds at a time: every paid period covering that time.

export interface Standing {
  tier: Tier;
  plans: Set<Plan>;
}

export async function standingOf(m: EntityManager, agentId: string, at: Date): Promise<Standing> {
  const rows = await m.find(MarketSubscriptionEntity, { where: { agentId, endTime: MoreThan(at) } });
  const plans = new Set(rows.filter((r) => r.startTime <= at).map((r) => r.plan));
  return { tier: tierOf(plans), plans };
}

/** The end of the latest period of `plan` still running (or starting) after `at`; undefined when none. */
export async function activePlanEnd(m: EntityManager, agentId: string, plan: Plan, at: Date): Promise<Date | undefined> {
  const rows = await m.find(MarketSubscriptionEntity, { where: { agentId, plan, endTime: MoreThan(at) }, order: { endTime: "DESC" }, take: 1 });
  return rows[0]?.endTime;
}

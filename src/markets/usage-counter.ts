import type { DataSource } from "typeorm";
import { MarketUsageDayEntity } from "./markets.entity.js";

// The tiers' daily call limits, shared by every server through the database: one counter row per agent
// per UTC day, created if missing (insert-or-ignore) and then incremented by ONE guarded UPDATE
// (`calls = calls + 1 WHERE calls < limit`). The update is atomic on SQLite and MySQL/MariaDB alike, so
// of any number of concurrent calls on any number of servers exactly `limit` are counted in.

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** The next UTC midnight after `at`: when the day's count resets. */
export function resetTime(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

export class UsageCounter {
  constructor(private readonly ds: DataSource) {}

  /** Counts one call for `agentId` today; false when `limit` (undefined: unlimited) is already reached. */
  async take(agentId: string, limit: number | undefined, at = new Date()): Promise<boolean> {
    const day = utcDay(at);
    await this.ds.createQueryBuilder().insert().into(MarketUsageDayEntity).values({ agentId, day, calls: 0 }).orIgnore().execute();
    const q = this.ds.createQueryBuilder().update(MarketUsageDayEntity).set({ calls: () => "calls + 1" }).where("agent_id = :agentId AND day = :day", { agentId, day });
    if (limit !== undefined) q.andWhere("calls < :limit", { limit });
    const res = await q.execute();
    return (res.affected ?? 0) === 1;
  }

  /** Gives back a call counted by `take` whose work failed (a call counts when it succeeds). */
  async giveBack(agentId: string, at: Date): Promise<void> {
    await this.ds
      .createQueryBuilder()
      .update(MarketUsageDayEntity)
      .set({ calls: () => "calls - 1" })
      .where("agent_id = :agentId AND day = :day AND calls > 0", { agentId, day: utcDay(at) })
      .execute();
  }

  async today(agentId: string, at = new Date()): Promise<number> {
    return (await this.ds.manager.findOneBy(MarketUsageDayEntity, { agentId, day: utcDay(at) }))?.calls ?? 0;
  }
}

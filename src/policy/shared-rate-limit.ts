import type { DataSource } from "typeorm";
import { PayerRateLimitEntity } from "../platform/db/cluster-state.entity.js";
import { execute, sqlGreatest, sqlInsertIgnore } from "../platform/db/shared-sql.js";
import type { RateLimiter, RateLimitOptions } from "./payer-rate-limit.js";

// The per-payer rate limit shared by every server through the database, as GCRA (the token bucket in one
// number): each payer's row holds the theoretical arrival time `tat` of its next call; a call is admitted
// when max(tat, now) + T - now <= burst * T (T = one minute / perMinute), and admitting it moves tat to
// max(tat, now) + T (a new payer's tat is 0: a full bucket). Admission is ONE guarded UPDATE, atomic on SQLite and MySQL/MariaDB alike, so of any
// number of concurrent calls on any number of servers exactly the budget goes through. Clocks are the
// servers' own (skew between servers shifts a refill by that skew, no more).

export class SharedPayerRateLimiter implements RateLimiter {
  private calls = 0;
  constructor(
    private readonly ds: DataSource,
    readonly options: RateLimitOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async take(payer: string): Promise<number> {
    if (this.options.perMinute <= 0) return 0;
    const key = payer.toLowerCase();
    const nowUs = Math.round(this.now() * 1000);
    const intervalUs = Math.max(1, Math.round(60_000_000 / this.options.perMinute));
    const windowUs = intervalUs * Math.max(1, this.options.burst);
    // Tolerance for the servers' clocks and for concurrent calls that read `now` in one order and reach
    // the database in another: under half an interval, so never a whole extra call.
    const slackUs = Math.min(Math.floor(intervalUs / 2), 1_000_000);
    const max = sqlGreatest(this.ds);
    const admit = () =>
      execute(this.ds, `UPDATE payer_rate_limits SET tat_us = ${max}(tat_us, ?) + ? WHERE payer = ? AND ${max}(tat_us, ?) + ? - ? <= ?`, [
        nowUs,
        intervalUs,
        key,
        nowUs,
        intervalUs,
        nowUs,
        windowUs + slackUs,
      ]);
    // Now and then drop rows whose bucket is full again (tat in the past): the same as no row.
    if (++this.calls % 1_000 === 0) void execute(this.ds, "DELETE FROM payer_rate_limits WHERE tat_us < ?", [nowUs - intervalUs]).catch(() => undefined);
    if ((await admit()) === 1) return 0;
    // No row yet (a payer's first call; a concurrent first call may create it first), or over the limit.
    await execute(this.ds, `${sqlInsertIgnore(this.ds)} INTO payer_rate_limits (payer, tat_us) VALUES (?, 0)`, [key]);
    if ((await admit()) === 1) return 0;
    const row = await this.ds.manager.findOneBy(PayerRateLimitEntity, { payer: key });
    const waitUs = Math.max(row?.tatUs ?? 0, nowUs) + intervalUs - nowUs - windowUs;
    return Math.max(1, Math.ceil(waitUs / 1000));
  }
}

import type { DataSource } from "typeorm";
import { PayerRateLimitEntity } from "../platform/db/cluster-state.entity.js";
import { execute, sqlGreatest, sqlInsertIgnore } from "../platform/db/shared-sql.js";
import type { RateLimiter, RateLimitOptions } from "./payer-rate-limit.js";

// The per-payer rate limit shared by every server through the database, as GCRA (the token bucket in one
// number): each payer's row holds the theoretical arrival time `tat` of its next call; a call is admitted
// when max(tat, now) + T - now <= burst * T (T = one minute / perMinute), and admitting it moves tat to
// max(tat, now) + T (a new payer's tat is 0: a full bucket). Admission is ONE guarded UPDATE (or, for a new payer, one INSERT IGNORE), atomic on SQLite and MySQL/MariaDB alike, so of any
// number of concurrent calls on any number of servers exactly the budget goes through. Clocks are the
// servers' own (skew between servers shifts a refill by that skew, no more).

export class SharedPayerRateLimiter implements RateLimiter {
  private calls = 0;
  /** Payers this server has seen: a hint whether a row exists, never a decision. */
  private readonly seen = new Set<string>();
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
    // A payer this server has not seen is most likely new: its first call is one INSERT of the row as the
    // admitted call leaves it (tat = now + T, what admitting on a full bucket gives). A row that exists
    // (another server, a concurrent first call) ignores the insert and the guarded UPDATE decides.
    const insertAdmitted = () => execute(this.ds, `${sqlInsertIgnore(this.ds)} INTO payer_rate_limits (payer, tat_us) VALUES (?, ?)`, [key, nowUs + intervalUs]);
    if (!this.seen.has(key)) {
      if (this.seen.size >= 100_000) this.seen.clear(); // only a hint: forgetting costs one ignored insert
      this.seen.add(key);
      if ((await insertAdmitted()) === 1) return 0;
      if ((await admit()) === 1) return 0;
    } else {
      if ((await admit()) === 1) return 0;
      // No row (swept, or a concurrent first call here has not written it yet), or over the limit.
      if ((await insertAdmitted()) === 1) return 0;
      if ((await admit()) === 1) return 0;
    }
    const row = await this.ds.manager.findOneBy(PayerRateLimitEntity, { payer: key });
    const waitUs = Math.max(row?.tatUs ?? 0, nowUs) + intervalUs - nowUs - windowUs;
    return Math.max(1, Math.ceil(waitUs / 1000));
  }
}

import type { DataSource } from "typeorm";
import { CircuitBreakerEntity } from "../platform/db/cluster-state.entity.js";
import { execute, sqlInsertIgnore } from "../platform/db/shared-sql.js";
import { CircuitOpenError, upstreamKey, type BreakerOptions, type Breakers, type BreakerState } from "./circuit-breakers.js";

// Circuit breakers shared by every process through the database (table circuit_breakers, a row per
// upstream origin): failures from any server or worker count toward one breaker, and the half-open trial is
// admitted ONCE across the cluster by a guarded UPDATE that takes a trial lease (`trial_until_ms`). A
// trial whose process died frees itself when the lease ends. Every change is one atomic statement.
// Reads (the gates' state check before a challenge, `admit` on the closed path) use a copy of the row at
// most `readCacheMs` old, dropped on this process's own writes: another process's change is seen within
// that time, and the challenge path does not pay a database round trip per upstream on every call.
// Breakers protect upstreams, not money: when the database cannot be read they fail open (closed), and a
// failed write of an outcome is dropped.

export interface SharedBreakerOptions extends BreakerOptions {
  /** How long an admitted half-open trial holds the breaker before another may be admitted. */
  trialLeaseMs?: number;
  /** Staleness allowed for reads of the shared state (0: read the database every time). */
  readCacheMs?: number;
}

type Row = Pick<CircuitBreakerEntity, "failures" | "openedMs" | "trialUntilMs">;

export class SharedCircuitBreakers implements Breakers {
  private readonly cache = new Map<string, { at: number; row: Row | undefined }>();
  /** Upstreams whose half-open trial this process holds. */
  private readonly trials = new Set<string>();

  constructor(
    private readonly ds: DataSource,
    readonly options: SharedBreakerOptions,
    private readonly now: () => number = Date.now,
  ) {}

  private async row(key: string): Promise<Row | undefined> {
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < (this.options.readCacheMs ?? 0)) return hit.row;
    const found = await this.ds.manager.findOneBy(CircuitBreakerEntity, { upstream: key }).catch(() => null);
    const row = found ? { failures: found.failures, openedMs: found.openedMs, trialUntilMs: found.trialUntilMs } : undefined;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { at: now, row });
    return row;
  }

  private stateOf(row: Row | undefined): BreakerState {
    if (!row || row.openedMs === null) return "closed";
    return this.now() - row.openedMs >= this.options.cooldownMs ? "half_open" : "open";
  }

  async state(urlOrName: string): Promise<BreakerState> {
    return this.stateOf(await this.row(upstreamKey(urlOrName)));
  }

  async retryAfterMs(urlOrName: string): Promise<number> {
    const row = await this.row(upstreamKey(urlOrName));
    if (!row || row.openedMs === null) return 0;
    return Math.max(0, this.options.cooldownMs - (this.now() - row.openedMs));
  }

  async admit(urlOrName: string): Promise<void> {
    const key = upstreamKey(urlOrName);
    let row = await this.row(key);
    if (this.stateOf(row) !== "closed") {
      this.cache.delete(key); // decide on the current row, not a cached one
      row = await this.row(key);
    }
    const state = this.stateOf(row);
    if (state === "closed") return;
    if (state === "half_open") {
      const now = this.now();
      const took = await execute(
        this.ds,
        "UPDATE circuit_breakers SET trial_until_ms = ? WHERE upstream = ? AND opened_ms = ? AND (trial_until_ms IS NULL OR trial_until_ms <= ?)",
        [now + (this.options.trialLeaseMs ?? 30_000), key, row!.openedMs, now],
      ).catch(() => 1);
      this.cache.delete(key);
      if (took === 1) {
        this.trials.add(key);
        return;
      }
    }
    const wait = row?.openedMs == null ? 0 : this.options.cooldownMs - (this.now() - row.openedMs);
    throw new CircuitOpenError(key, wait > 0 ? wait : this.options.cooldownMs);
  }

  async release(urlOrName: string): Promise<void> {
    const key = upstreamKey(urlOrName);
    if (!this.trials.delete(key)) return;
    await execute(this.ds, "UPDATE circuit_breakers SET trial_until_ms = NULL WHERE upstream = ?", [key]).catch(() => undefined);
    this.cache.delete(key);
  }

  async success(urlOrName: string): Promise<void> {
    const key = upstreamKey(urlOrName);
    const held = this.trials.delete(key);
    const known = this.cache.get(key)?.row;
    // Nothing to reset when the row (as last read) is clean: no write on the healthy path.
    if (!held && known && known.failures === 0 && known.openedMs === null) return;
    await execute(this.ds, "UPDATE circuit_breakers SET failures = 0, opened_ms = NULL, trial_until_ms = NULL WHERE upstream = ?", [key]).catch(() => undefined);
    this.cache.delete(key);
  }

  async failure(urlOrName: string): Promise<void> {
    const key = upstreamKey(urlOrName);
    const held = this.trials.delete(key);
    const now = this.now();
    await this.recordFailure(key, held, now).catch(() => undefined);
    this.cache.delete(key);
  }

  private async recordFailure(key: string, held: boolean, now: number): Promise<void> {
    await execute(this.ds, `${sqlInsertIgnore(this.ds)} INTO circuit_breakers (upstream, failures, opened_ms, trial_until_ms) VALUES (?, 0, NULL, NULL)`, [key]);
    // opened_ms is assigned first: MySQL evaluates SET left to right (later terms see earlier ones), SQLite
    // evaluates every term on the old row; in this order both read the old failure count.
    await execute(
      this.ds,
      "UPDATE circuit_breakers SET opened_ms = CASE WHEN ? = 1 OR failures + 1 >= ? THEN ? ELSE opened_ms END, failures = failures + 1, trial_until_ms = CASE WHEN ? = 1 THEN NULL ELSE trial_until_ms END WHERE upstream = ?",
      [held ? 1 : 0, this.options.threshold, now, held ? 1 : 0, key],
    );
  }
}

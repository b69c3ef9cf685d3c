import { In, LessThanOrEqual, MoreThan, Not, type DataSource, type EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { runInTransaction } from "../platform/db/transaction.js";
import type { Evaluation, Reading } from "./alert-evaluator.js";
import { PriceAlertEntity, PriceAlertEventEntity } from "./price-alert.entity.js";

// Persistence of price alerts: creation with its first evaluation, the scheduler's claim of due
// alerts, and applying an evaluation (guarded so a fired alert never changes again).

export const LIVE_STATES = ["armed", "stale"] as const;
const cut = (s: string | null, n: number) => (s === null ? null : s.length > n ? `${s.slice(0, n - 1)}…` : s);

export class AlertStore {
  constructor(private readonly ds: DataSource) {}

  get(manager: EntityManager, alertId: string): Promise<PriceAlertEntity | null> {
    return manager.findOneBy(PriceAlertEntity, { alertId });
  }

  /** The alert's history, oldest first (its most recent `limit` events). */
  async history(manager: EntityManager, alertId: string, limit = 100): Promise<PriceAlertEventEntity[]> {
    const rows = await manager.find(PriceAlertEventEntity, { where: { alertId }, order: { evaluation: "DESC" }, take: limit });
    return rows.reverse();
  }

  /** Alerts of a wallet that are still evaluated (not fired, not expired). */
  countLive(manager: EntityManager, owner: string, now: Date): Promise<number> {
    return manager.countBy(PriceAlertEntity, { owner, state: In([...LIVE_STATES]), expireTime: MoreThan(now) });
  }

  /** Stores a new alert with its first evaluation, in the caller's transaction (the call's settlement). */
  async create(manager: EntityManager, alert: PriceAlertEntity, first: PriceAlertEventEntity): Promise<void> {
    await manager.insert(PriceAlertEntity, alert);
    await manager.insert(PriceAlertEventEntity, first);
  }

  /** Live alerts whose next evaluation is due. */
  due(now: Date, limit: number): Promise<PriceAlertEntity[]> {
    return this.ds.manager.find(PriceAlertEntity, {
      where: { state: In([...LIVE_STATES]), nextEvalTime: LessThanOrEqual(now), expireTime: MoreThan(now) },
      order: { nextEvalTime: "ASC" },
      take: limit,
    });
  }

  /** Moves a due alert's next evaluation forward; true if this caller won it (one evaluator per interval). */
  async claim(alertId: string, now: Date, next: Date): Promise<boolean> {
    const res = await this.ds.manager.update(PriceAlertEntity, { alertId, state: In([...LIVE_STATES]), nextEvalTime: LessThanOrEqual(now) }, { nextEvalTime: next });
    return (res.affected ?? 0) === 1;
  }

  /** Records one evaluation; an event is written when the state changes. */
  async apply(alert: PriceAlertEntity, ev: Evaluation, reading: Reading, now: Date): Promise<void> {
    const evaluation = alert.evaluations + 1;
    const patch: Partial<PriceAlertEntity> = { state: ev.state, lastEvalTime: now, evaluations: evaluation };
    if (reading.ok) Object.assign(patch, { lastPrice: reading.price, lastDataTime: reading.dataTime, lastReadTime: reading.readAt, lastEndpoint: cut(reading.endpoint, 512), lastError: null });
    else patch.lastError = cut(reading.error, 512);
    if (ev.state === "fired" && reading.ok) Object.assign(patch, { firedAt: now, firedPrice: reading.price });
    await runInTransaction(this.ds, async (m) => {
      const res = await m.update(PriceAlertEntity, { alertId: alert.alertId, state: Not("fired") }, patch);
      if ((res.affected ?? 0) !== 1 || ev.state === alert.state) return;
      await m.insert(PriceAlertEventEntity, eventOf(alert.alertId, evaluation, now, ev, reading));
    });
  }
}

export function eventOf(alertId: string, evaluation: number, now: Date, ev: Evaluation, reading: Reading, prefix = ""): PriceAlertEventEntity {
  return Object.assign(new PriceAlertEventEntity(), {
    eventId: newId("alev"),
    alertId,
    evaluation,
    eventTime: now,
    state: ev.state,
    price: reading.ok ? reading.price : null,
    dataTime: reading.ok ? reading.dataTime : null,
    endpoint: reading.ok ? cut(reading.endpoint, 512) : null,
    note: cut(prefix + ev.note, 512)!,
  });
}

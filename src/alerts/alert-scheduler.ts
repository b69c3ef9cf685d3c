import type { DataSource } from "typeorm";
import type { Logger } from "../platform/log.js";
import type { Venue, VenueClient } from "../market-data/venues.js";
import { evaluate, readingOf, type Reading } from "./alert-evaluator.js";
import { AlertStore } from "./alert-store.js";
import type { PriceAlertEntity } from "./price-alert.entity.js";

// Evaluates due price alerts every ALERT_EVAL_INTERVAL_SECONDS, in the server process. Each due alert
// is claimed first (its next evaluation moved forward by a guarded update, so several servers on one
// database evaluate it once), then the claimed alerts are grouped so each (venue, pair) is read once
// per tick through the VenueClient, and every alert is evaluated against its group's read.

export interface AlertSchedulerOptions {
  ds: DataSource;
  venues: VenueClient;
  intervalMs: number;
  log: Logger;
  /** Alerts evaluated per tick at most (the rest wait for the next tick). */
  batch?: number;
}

export class AlertScheduler {
  private readonly store: AlertStore;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly o: AlertSchedulerOptions) {
    this.store = new AlertStore(o.ds);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for an evaluation in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over the due alerts; a tick while one is in progress waits for it instead. */
  tick(now = new Date()): Promise<void> {
    if (this.running) return this.running;
    this.running = this.pass(now)
      .catch((err) => this.o.log.error({ err }, "alert evaluation failed"))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async pass(now: Date): Promise<void> {
    const due = await this.store.due(now, this.o.batch ?? 500);
    const next = new Date(now.getTime() + this.o.intervalMs);
    const claimed: PriceAlertEntity[] = [];
    for (const a of due) if (await this.store.claim(a.alertId, now, next)) claimed.push(a);
    if (!claimed.length) return;
    const groups = new Map<string, PriceAlertEntity[]>();
    for (const a of claimed) {
      const key = `${a.venue}|${a.pair}`;
      groups.set(key, [...(groups.get(key) ?? []), a]);
    }
    await Promise.all(
      [...groups.values()].map(async (alerts) => {
        const { venue, pair } = alerts[0]!;
        const reading = await this.read(venue as Venue, pair);
        const at = new Date();
        for (const a of alerts) {
          const ev = evaluate({ state: a.state, condition: a.condition, threshold: a.threshold, referencePrice: a.referencePrice, maxAgeSeconds: a.maxAgeSeconds, lastDataTime: a.lastDataTime }, reading, at);
          await this.store.apply(a, ev, reading, at);
          if (ev.state !== a.state) this.o.log.info({ alertId: a.alertId, from: a.state, to: ev.state }, "price alert changed state");
        }
      }),
    );
  }

  private async read(venue: Venue, pair: string): Promise<Reading> {
    const [base, quote] = pair.split("-");
    try {
      const q = await this.o.venues.quote(venue, base!, quote!);
      return readingOf(q, new Date());
    } catch (err) {
      return { ok: false, error: (err as Error).message, readAt: new Date() };
    }
  }
}

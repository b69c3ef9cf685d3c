import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

export type AlertState = "armed" | "fired" | "stale";
export type AlertCondition = "above" | "below" | "pct-move";

// A price alert defined by a paid oracle.alert-generator call and evaluated on the server's schedule.
// Prices are the venue's decimal strings (never floats). `next_eval_time` is the claim: a scheduler
// evaluates an alert only after moving it forward with a guarded update, so a cluster evaluates each
// alert once per interval.
@Entity({ name: "price_alerts" })
@Index("ix_price_alerts_due", ["state", "nextEvalTime"])
@Index("ix_price_alerts_owner", ["owner", "state"])
export class PriceAlertEntity {
  @PrimaryColumn({ name: "alert_id", type: "varchar", length: 32 })
  alertId!: string;

  /** The paying wallet that created it (checksummed); only it may read the alert. */
  @Column({ name: "owner", type: "varchar", length: 42 })
  owner!: string;

  @Column({ name: "payment_id", type: "varchar", length: 32 })
  paymentId!: string;

  @Column({ name: "pair", type: "varchar", length: 24 })
  pair!: string;

  @Column({ name: "venue", type: "varchar", length: 16 })
  venue!: string;

  @Column({ name: "alert_condition", type: "varchar", length: 16 })
  condition!: AlertCondition;

  /** A price (above/below) or a percentage (pct-move), as a decimal string. */
  @Column({ name: "threshold", type: "varchar", length: 48 })
  threshold!: string;

  /** pct-move: the price of the first evaluation, which moves are measured from. */
  @Column({ name: "reference_price", type: "varchar", length: 48, nullable: true })
  referencePrice!: string | null;

  @Column({ name: "max_age_seconds", type: "integer" })
  maxAgeSeconds!: number;

  @Column({ name: "state", type: "varchar", length: 8 })
  state!: AlertState;

  @Column({ name: "fired_at", ...TIMESTAMP, nullable: true })
  firedAt!: Date | null;

  @Column({ name: "fired_price", type: "varchar", length: 48, nullable: true })
  firedPrice!: string | null;

  /** The last good read: its price, the time of its data, when and where it was read. */
  @Column({ name: "last_price", type: "varchar", length: 48, nullable: true })
  lastPrice!: string | null;

  @Column({ name: "last_data_time", ...TIMESTAMP, nullable: true })
  lastDataTime!: Date | null;

  @Column({ name: "last_read_time", ...TIMESTAMP, nullable: true })
  lastReadTime!: Date | null;

  @Column({ name: "last_endpoint", type: "varchar", length: 512, nullable: true })
  lastEndpoint!: string | null;

  /** The last evaluation: when, and the venue's error when the read failed. */
  @Column({ name: "last_eval_time", ...TIMESTAMP, nullable: true })
  lastEvalTime!: Date | null;

  @Column({ name: "last_error", type: "varchar", length: 512, nullable: true })
  lastError!: string | null;

  @Column({ name: "evaluations", type: "integer" })
  evaluations!: number;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  /** Alerts are not evaluated after this time (ALERT_TTL_HOURS). */
  @Column({ name: "expire_time", ...TIMESTAMP })
  expireTime!: Date;

  @Column({ name: "next_eval_time", ...TIMESTAMP })
  nextEvalTime!: Date;
}

// One line of an alert's history: its creation and every change of state, with the read behind it.
@Entity({ name: "price_alert_events" })
@Index("ix_price_alert_events_alert", ["alertId", "evaluation"])
export class PriceAlertEventEntity {
  @PrimaryColumn({ name: "event_id", type: "varchar", length: 32 })
  eventId!: string;

  @Column({ name: "alert_id", type: "varchar", length: 32 })
  alertId!: string;

  /** The evaluation (1 = the one made when the alert was created) that recorded it. */
  @Column({ name: "evaluation", type: "integer" })
  evaluation!: number;

  @Column({ name: "event_time", ...TIMESTAMP })
  eventTime!: Date;

  @Column({ name: "state", type: "varchar", length: 8 })
  state!: AlertState;

  @Column({ name: "price", type: "varchar", length: 48, nullable: true })
  price!: string | null;

  @Column({ name: "data_time", ...TIMESTAMP, nullable: true })
  dataTime!: Date | null;

  @Column({ name: "endpoint", type: "varchar", length: 512, nullable: true })
  endpoint!: string | null;

  @Column({ name: "note", type: "varchar", length: 512 })
  note!: string;
}

import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

export type WebhookState = "pending" | "delivering" | "delivered" | "dead";

// The webhook outbox: an event is written in the same transaction as what it reports, then delivered
// (and retried with backoff for 24 hours) by the dispatcher, never inline with a request.
@Entity({ name: "webhook_events" })
@Index("ix_webhook_events_due", ["state", "nextAttemptTime"])
export class WebhookEventEntity {
  @PrimaryColumn({ name: "event_id", type: "varchar", length: 32 })
  eventId!: string;

  @Index("ix_webhook_events_agent")
  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "event_type", type: "varchar", length: 48 })
  eventType!: string;

  @Column({ name: "payload_json", type: "text" })
  payloadJson!: string;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: WebhookState;

  @Column({ name: "attempts", type: "integer", default: 0 })
  attempts!: number;

  @Column({ name: "next_attempt_time", ...TIMESTAMP, nullable: true })
  nextAttemptTime!: Date | null;

  @Column({ name: "last_status", type: "integer", nullable: true })
  lastStatus!: number | null;

  @Column({ name: "last_error", type: "varchar", length: 512, nullable: true })
  lastError!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "delivered_time", ...TIMESTAMP, nullable: true })
  deliveredTime!: Date | null;

  /** The request that caused the event (sent as X-Request-Id on delivery); null outside a request. */
  @Column({ name: "request_id", type: "varchar", length: 128, nullable: true })
  requestId!: string | null;
}

import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { LONG_TEXT, TIMESTAMP } from "../platform/db/column-types.js";

/**
 * `queued` until paid, `pending` when claimable, `running` under a lease, `refunding` after giving up, then
 * final. `awaiting` is a paid job decided by the operator (arbitration), never claimed by a worker.
 */
export type JobState = "queued" | "pending" | "awaiting" | "running" | "delivered" | "failed" | "refunding" | "refunded";

// An asynchronous SKU run. Workers claim pending jobs under a lease that expires if they die.
@Entity({ name: "service_jobs" })
@Index("ix_service_jobs_claim", ["state", "leaseUntil"])
@Index("ix_service_jobs_priority", ["state", "priority", "createTime"])
export class ServiceJobEntity {
  @PrimaryColumn({ name: "job_id", type: "varchar", length: 32 })
  jobId!: string;

  @Column({ name: "sku_id", type: "varchar", length: 64 })
  skuId!: string;

  @Column({ name: "payment_id", type: "varchar", length: 32 })
  paymentId!: string;

  @Column({ name: "payer", type: "varchar", length: 42 })
  payer!: string;

  @Column({ name: "input_json", type: LONG_TEXT })
  inputJson!: string;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: JobState;

  /** The full paid response once delivered (deliverable, trust envelope, payment proof). */
  @Column({ name: "result_json", type: LONG_TEXT, nullable: true })
  resultJson!: string | null;

  /** The paid call's `svc_trust.policy_manifest` (JSON), reported with the deliverable. */
  @Column({ name: "manifest_json", type: LONG_TEXT, nullable: true })
  manifestJson!: string | null;

  @Column({ name: "error", type: "varchar", length: 512, nullable: true })
  error!: string | null;

  @Column({ name: "attempts", type: "integer", default: 0 })
  attempts!: number;

  /** Claim priority: higher first (the Operator tier's priority queue), then oldest first. */
  @Column({ name: "priority", type: "integer", default: 0 })
  priority!: number;

  @Column({ name: "lease_until", ...TIMESTAMP, nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "finish_time", ...TIMESTAMP, nullable: true })
  finishTime!: Date | null;

  /** The request that created the job (its x-request-id), carried into the worker's logs; null outside a request. */
  @Column({ name: "request_id", type: "varchar", length: 128, nullable: true })
  requestId!: string | null;
}

import { Column, Entity, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// The latest computed reputation of an agent (refreshed every 15 minutes and after events).
@Entity({ name: "reputation_scores" })
export class ReputationScoreEntity {
  @PrimaryColumn({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "score", type: "double" })
  score!: number;

  @Column({ name: "components_json", type: "text" })
  componentsJson!: string;

  @Column({ name: "badge", type: "varchar", length: 16 })
  badge!: string;

  @Column({ name: "proofs", type: "integer" })
  proofs!: number;

  @Column({ name: "completed_jobs", type: "integer" })
  completedJobs!: number;

  @Column({ name: "failed_jobs", type: "integer" })
  failedJobs!: number;

  @Column({ name: "disputes", type: "integer" })
  disputes!: number;

  /** Recent totals, oldest first (at most 24). */
  @Column({ name: "trend_json", type: "text" })
  trendJson!: string;

  @Column({ name: "compute_time", ...TIMESTAMP })
  computeTime!: Date;
}

// A named lease: the holder runs the job (the 15-minute refresh) once across a cluster.
@Entity({ name: "scheduler_leases" })
export class SchedulerLeaseEntity {
  @PrimaryColumn({ name: "name", type: "varchar", length: 64 })
  name!: string;

  @Column({ name: "holder", type: "varchar", length: 64 })
  holder!: string;

  @Column({ name: "lease_until", ...TIMESTAMP })
  leaseUntil!: Date;
}

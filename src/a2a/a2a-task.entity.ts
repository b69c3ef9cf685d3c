import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { LONG_TEXT, TIMESTAMP } from "../platform/db/column-types.js";

// One A2A task of a SKU call, as the @a2a-js/sdk request handler reads and writes it (the task's
// proto-JSON), with its state and SKU call columns beside it for conditional updates and clean-up.
@Entity({ name: "a2a_tasks" })
export class A2aTaskEntity {
  @PrimaryColumn({ name: "task_id", type: "varchar", length: 64 })
  taskId!: string;

  @Column({ name: "context_id", type: "varchar", length: 64 })
  contextId!: string;

  /** The task state in its 0.3 spelling (`input-required`, `working`, `completed`...). */
  @Column({ name: "state", type: "varchar", length: 24 })
  state!: string;

  @Column({ name: "sku_id", type: "varchar", length: 64, nullable: true })
  skuId!: string | null;

  /** The async job of a paid call, polled by tasks/get until it delivers or fails. */
  @Column({ name: "job_id", type: "varchar", length: 32, nullable: true })
  jobId!: string | null;

  /** The v1.0 proto-JSON of the task (history, artifacts, metadata). */
  @Column({ name: "task_json", type: LONG_TEXT })
  taskJson!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Index("ix_a2a_tasks_update_time")
  @Column({ name: "update_time", ...TIMESTAMP })
  updateTime!: Date;
}

import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// The comped enterprise audit: one per agent (unique agent_id), at most the daily cap fleet-wide
// (a counter row per UTC day, incremented with a guarded update).

@Entity({ name: "comp_days" })
export class CompDayEntity {
  @PrimaryColumn({ name: "day", type: "varchar", length: 10 })
  day!: string;

  @Column({ name: "granted", type: "integer" })
  granted!: number;
}

@Entity({ name: "comp_grants" })
export class CompGrantEntity {
  @PrimaryColumn({ name: "comp_id", type: "varchar", length: 32 })
  compId!: string;

  @Index("uq_comp_grants_agent", { unique: true })
  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "day", type: "varchar", length: 10 })
  day!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

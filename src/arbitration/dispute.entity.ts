import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { DISPUTE_VERDICTS } from "../catalog/dispute-disclosure.js";
import { LONG_TEXT, MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

export type DisputeState = "open" | "decided";
export type DisputeVerdict = (typeof DISPUTE_VERDICTS)[number];
export const VERDICTS: readonly DisputeVerdict[] = DISPUTE_VERDICTS;

// A contested marketplace deliverable, opened by a paid arbitration.dispute-settlement call and decided
// once by the operator panel. One dispute per paid arbitration job (unique).
@Entity({ name: "disputes" })
@Index("ix_disputes_state", ["state", "createTime"])
export class DisputeEntity {
  @PrimaryColumn({ name: "dispute_id", type: "varchar", length: 32 })
  disputeId!: string;

  @Index("ix_disputes_job")
  @Column({ name: "job_id", type: "varchar", length: 32 })
  jobId!: string;

  @Index("uq_disputes_service_job", { unique: true })
  @Column({ name: "service_job_id", type: "varchar", length: 32 })
  serviceJobId!: string;

  @Column({ name: "claimant", type: "varchar", length: 42 })
  claimant!: string;

  @Column({ name: "claim", type: LONG_TEXT })
  claim!: string;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: DisputeState;

  @Column({ name: "verdict", type: "varchar", length: 16, nullable: true })
  verdict!: DisputeVerdict | null;

  @Column({ name: "rationale", type: "text", nullable: true })
  rationale!: string | null;

  @Column({ name: "proof_id", type: "varchar", length: 32, nullable: true })
  proofId!: string | null;

  @Column({ name: "refund", ...MONEY, transformer: moneyTransformer })
  refund!: bigint;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "decide_time", ...TIMESTAMP, nullable: true })
  decideTime!: Date | null;
}

import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// Witness enrollments and attestations. One attestation per witness per job (unique); at most two per
// job (checked under the job's lock).

@Entity({ name: "witness_enrollments" })
export class WitnessEnrollmentEntity {
  @PrimaryColumn({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "families_json", type: "text" })
  familiesJson!: string;

  @Column({ name: "enroll_time", ...TIMESTAMP })
  enrollTime!: Date;
}

@Entity({ name: "attestations" })
@Index("uq_attestations_job_witness", ["jobId", "witnessAgentId"], { unique: true })
export class AttestationEntity {
  @PrimaryColumn({ name: "attestation_id", type: "varchar", length: 32 })
  attestationId!: string;

  @Index("ix_attestations_job")
  @Column({ name: "job_id", type: "varchar", length: 32 })
  jobId!: string;

  @Index("ix_attestations_witness")
  @Column({ name: "witness_agent_id", type: "varchar", length: 24 })
  witnessAgentId!: string;

  @Column({ name: "verdict", type: "varchar", length: 16 })
  verdict!: string;

  @Column({ name: "content_sha256", type: "varchar", length: 64 })
  contentSha256!: string;

  @Column({ name: "reason", type: "text" })
  reason!: string;

  /** Whether it earned reputation credit (at most 5 per witness per UTC day). */
  @Column({ name: "credited", type: "boolean" })
  credited!: boolean;

  @Column({ name: "day", type: "varchar", length: 10 })
  day!: string;

  @Column({ name: "proof_id", type: "varchar", length: 32 })
  proofId!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

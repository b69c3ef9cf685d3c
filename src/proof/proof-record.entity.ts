import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// A record on the public proof rail. `sequence` orders the rail; (kind, settlement_ref) is unique so a
// settlement is recorded once.
@Entity({ name: "proof_records" })
@Index("uq_proof_records_kind_ref", ["kind", "settlementRef"], { unique: true })
export class ProofRecordEntity {
  @PrimaryGeneratedColumn({ name: "sequence", type: "integer" })
  sequence!: number;

  @Index("uq_proof_records_id", { unique: true })
  @Column({ name: "proof_id", type: "varchar", length: 32 })
  proofId!: string;

  @Column({ name: "kind", type: "integer" })
  kind!: number;

  /** A tx hash, `{tx_hash}:{batch_index}` for one payment of a batched settlement, or another domain's id. */
  @Column({ name: "settlement_ref", type: "varchar", length: 80, nullable: true })
  settlementRef!: string | null;

  @Column({ name: "task_class", type: "varchar", length: 64 })
  taskClass!: string;

  @Column({ name: "ts", ...TIMESTAMP })
  ts!: Date;

  /** The public body, canonical JSON; never holds cost or net figures. */
  @Column({ name: "body_json", type: "text" })
  bodyJson!: string;

  @Column({ name: "record_sha256", type: "varchar", length: 64 })
  recordSha256!: string;

  @Column({ name: "integrity_signature", type: "varchar", length: 64 })
  integritySignature!: string;

  /** Ed25519 signature (base64) over the canonical record; verifiable with the published key. */
  @Column({ name: "ed25519_signature", type: "varchar", length: 128, nullable: true })
  ed25519Signature!: string | null;

  /** The Merkle batch this record was anchored in; null until then. */
  @Index("ix_proof_records_anchor")
  @Column({ name: "anchor_id", type: "varchar", length: 32, nullable: true })
  anchorId!: string | null;
}

// A Merkle batch of consecutive records and the transaction that carries its root. first_sequence is
// unique: of two servers that batch the same records, one wins.
@Entity({ name: "proof_anchors" })
@Index("ix_proof_anchors_state", ["state", "leaseUntil"])
export class ProofAnchorEntity {
  @PrimaryColumn({ name: "anchor_id", type: "varchar", length: 32 })
  anchorId!: string;

  @Index("uq_proof_anchors_first", { unique: true })
  @Column({ name: "first_sequence", type: "integer" })
  firstSequence!: number;

  @Column({ name: "last_sequence", type: "integer" })
  lastSequence!: number;

  @Column({ name: "leaf_count", type: "integer" })
  leafCount!: number;

  @Column({ name: "root", type: "varchar", length: 66 })
  root!: string;

  /** `pending` while its transaction is sent, then `anchored`. */
  @Column({ name: "state", type: "varchar", length: 16 })
  state!: string;

  @Column({ name: "tx_hash", type: "varchar", length: 66, nullable: true })
  txHash!: string | null;

  @Column({ name: "network", type: "varchar", length: 32 })
  network!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "anchor_time", ...TIMESTAMP, nullable: true })
  anchorTime!: Date | null;

  /** Until when the server that created (or took over) a pending anchor sends it; then any server may. */
  @Column({ name: "lease_until", ...TIMESTAMP, nullable: true })
  leaseUntil!: Date | null;
}

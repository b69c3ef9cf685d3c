import { Column, Entity, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// A single-use seal: the claim that some content was produced by an agent at a time, unaltered.
@Entity({ name: "seals" })
export class SealEntity {
  @PrimaryColumn({ name: "seal_id", type: "varchar", length: 32 })
  sealId!: string;

  @Column({ name: "content_sha256", type: "varchar", length: 64 })
  contentSha256!: string;

  @Column({ name: "producer", type: "varchar", length: 128 })
  producer!: string;

  @Column({ name: "produced_at", ...TIMESTAMP })
  producedAt!: Date;

  @Column({ name: "payer", type: "varchar", length: 42 })
  payer!: string;

  @Column({ name: "signature", type: "varchar", length: 64 })
  signature!: string;

  @Column({ name: "sealed_at", ...TIMESTAMP })
  sealedAt!: Date;

  /** When the seal was first verified (single use); null while unused. */
  @Column({ name: "used_at", ...TIMESTAMP, nullable: true })
  usedAt!: Date | null;
}

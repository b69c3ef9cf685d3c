import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// A starter-credit note: an opaque bearer string `svcn_<note_id>_<secret>`; only the secret's digest is stored.
// Its balance lives in the ledger (account `liability:starter_note:<note_id>`).
@Entity({ name: "starter_notes" })
export class StarterNoteEntity {
  @PrimaryColumn({ name: "note_id", type: "varchar", length: 24 })
  noteId!: string;

  @Index("ix_starter_notes_agent")
  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "secret_hash", type: "varchar", length: 64 })
  secretHash!: string;

  @Column({ name: "budget", ...MONEY, transformer: moneyTransformer })
  budget!: bigint;

  @Column({ name: "status", type: "varchar", length: 16 })
  status!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

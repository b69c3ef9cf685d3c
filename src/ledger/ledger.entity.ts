import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from "typeorm";
import { MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// The double-entry journal: one entry per business event, postings that sum to zero.

@Entity({ name: "ledger_entries" })
@Index("uq_ledger_entries_event", ["kind", "ref"], { unique: true })
export class LedgerEntryEntity {
  @PrimaryColumn({ name: "entry_id", type: "varchar", length: 32 })
  entryId!: string;

  /** Business event (`sku_sale`, `sku_refund`, ...). */
  @Column({ name: "kind", type: "varchar", length: 32 })
  kind!: string;

  /** The event's own id (payment id, job id): an event posts once. */
  @Column({ name: "ref", type: "varchar", length: 96 })
  ref!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

@Entity({ name: "ledger_postings" })
export class LedgerPostingEntity {
  @PrimaryGeneratedColumn({ name: "posting_id", type: "integer" })
  postingId!: number;

  @Index("ix_ledger_postings_entry")
  @Column({ name: "entry_id", type: "varchar", length: 32 })
  entryId!: string;

  @Index("ix_ledger_postings_account")
  @Column({ name: "account", type: "varchar", length: 96 })
  account!: string;

  /** Signed atomic units: positive debits, negative credits. */
  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;
}

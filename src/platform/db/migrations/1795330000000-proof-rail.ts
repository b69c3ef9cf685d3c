import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// The verifiable proof rail: Ed25519 signatures on records, Merkle batches and their on-chain anchors.
export class ProofRail1795330000000 implements MigrationInterface {
  name = "ProofRail1795330000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("proof_records", new TableColumn({ name: "ed25519_signature", type: "varchar", length: "128", isNullable: true }));
    await q.addColumn("proof_records", new TableColumn({ name: "anchor_id", type: "varchar", length: "32", isNullable: true }));
    await q.createIndex("proof_records", new TableIndex({ name: "ix_proof_records_anchor", columnNames: ["anchor_id"] }));
    await q.createTable(
      new Table({
        name: "proof_anchors",
        columns: [
          { ...str("anchor_id", 32), isPrimary: true },
          { name: "first_sequence", type: "integer" },
          { name: "last_sequence", type: "integer" },
          { name: "leaf_count", type: "integer" },
          str("root", 66),
          str("state", 16),
          str("tx_hash", 66, true),
          str("network", 32),
          ts("create_time"),
          ts("anchor_time", true),
        ],
        indices: [new TableIndex({ name: "uq_proof_anchors_first", columnNames: ["first_sequence"], isUnique: true })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("proof_anchors");
    await q.dropIndex("proof_records", "ix_proof_records_anchor");
    await q.dropColumn("proof_records", "anchor_id");
    await q.dropColumn("proof_records", "ed25519_signature");
  }
}

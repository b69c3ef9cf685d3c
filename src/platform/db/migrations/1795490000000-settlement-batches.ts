import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str } from "./columns.js";

// Batched settlement: several payments share one settlement transaction, each at its own index. The
// payment's settlement record becomes (tx_hash, batch_index), unique together (batch_index is null for a
// transaction that settled one payment alone), and a settlement proof's settlement_ref may carry
// `{tx_hash}:{batch_index}` (up to 73 characters).
export class SettlementBatches1795490000000 implements MigrationInterface {
  name = "SettlementBatches1795490000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("x402_payments", new TableColumn({ name: "batch_index", type: "integer", isNullable: true }));
    await q.dropIndex("x402_payments", "uq_x402_payments_tx");
    await q.createIndex("x402_payments", new TableIndex({ name: "uq_x402_payments_tx_batch", columnNames: ["tx_hash", "batch_index"], isUnique: true }));
    await widenSettlementRef(q, 80);
  }

  async down(q: QueryRunner): Promise<void> {
    await widenSettlementRef(q, 66);
    await q.dropIndex("x402_payments", "uq_x402_payments_tx_batch");
    await q.createIndex("x402_payments", new TableIndex({ name: "uq_x402_payments_tx", columnNames: ["tx_hash"], isUnique: true }));
    await q.dropColumn("x402_payments", "batch_index");
  }
}

/** MySQL/MariaDB: MODIFY in place (TypeORM's changeColumn drops and re-adds a column whose length changes). */
async function widenSettlementRef(q: QueryRunner, length: number): Promise<void> {
  if (q.connection.driver.options.type === "better-sqlite3") {
    await q.changeColumn("proof_records", "settlement_ref", new TableColumn(str("settlement_ref", length, true)));
  } else {
    await q.query(`ALTER TABLE \`proof_records\` MODIFY \`settlement_ref\` varchar(${length}) NULL`);
  }
}

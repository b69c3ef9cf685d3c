import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// The effects outbox of settled payments (x402_payment_effects), and an index on payment state for
// the periodic reconciler's scan of in-flight payments.
export class PaymentEffects1795510000000 implements MigrationInterface {
  name = "PaymentEffects1795510000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "x402_payment_effects",
        columns: [
          { ...str("payment_id", 32), isPrimary: true },
          { name: "attempts", type: "integer" },
          str("last_error", 512),
          ts("next_attempt_time"),
          ts("create_time"),
        ],
      }),
    );
    await q.createIndex("x402_payments", new TableIndex({ name: "ix_x402_payments_state", columnNames: ["state", "update_time"] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex("x402_payments", "ix_x402_payments_state");
    await q.dropTable("x402_payment_effects");
  }
}

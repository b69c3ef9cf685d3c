import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// Verified introductions between registered agents (social.verified_introduction).
export class Introductions1795370000000 implements MigrationInterface {
  name = "Introductions1795370000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "introductions",
        columns: [
          { ...str("introduction_id", 32), isPrimary: true },
          str("payment_id", 32),
          str("payer", 42),
          str("introducer_agent_id", 24),
          str("agent_a_id", 24),
          str("agent_b_id", 24),
          { name: "message", type: "text" },
          str("purpose", 200, true),
          { name: "delegation_json", type: "text" },
          str("event_a_id", 32),
          str("event_b_id", 32),
          ts("create_time"),
        ],
        indices: [
          new TableIndex({ name: "uq_introductions_payment", columnNames: ["payment_id"], isUnique: true }),
          new TableIndex({ name: "ix_introductions_introducer", columnNames: ["introducer_agent_id"] }),
          new TableIndex({ name: "ix_introductions_agent_a", columnNames: ["agent_a_id"] }),
          new TableIndex({ name: "ix_introductions_agent_b", columnNames: ["agent_b_id"] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("introductions");
  }
}

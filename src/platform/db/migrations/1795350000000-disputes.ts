import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { LONG_TEXT } from "../column-types.js";
import { money, str, ts } from "./columns.js";

// Disputes decided by the operator panel (arbitration.dispute-settlement).
export class Disputes1795350000000 implements MigrationInterface {
  name = "Disputes1795350000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "disputes",
        columns: [
          { ...str("dispute_id", 32), isPrimary: true },
          str("job_id", 32),
          str("service_job_id", 32),
          str("claimant", 42),
          { name: "claim", type: LONG_TEXT },
          str("state", 16),
          str("verdict", 16, true),
          { name: "rationale", type: "text", isNullable: true },
          str("proof_id", 32, true),
          money("refund"),
          ts("create_time"),
          ts("decide_time", true),
        ],
        indices: [
          new TableIndex({ name: "ix_disputes_state", columnNames: ["state", "create_time"] }),
          new TableIndex({ name: "ix_disputes_job", columnNames: ["job_id"] }),
          new TableIndex({ name: "uq_disputes_service_job", columnNames: ["service_job_id"], isUnique: true }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("disputes");
  }
}

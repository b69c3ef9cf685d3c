import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { LONG_TEXT } from "../column-types.js";
import { str, ts } from "./columns.js";

// A2A tasks of SKU calls (the JSON-RPC front's task store), so tasks survive across requests and processes.
export class A2aTasks1795460000000 implements MigrationInterface {
  name = "A2aTasks1795460000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "a2a_tasks",
        columns: [
          { ...str("task_id", 64), isPrimary: true },
          str("context_id", 64),
          str("state", 24),
          str("sku_id", 64, true),
          str("job_id", 32, true),
          { name: "task_json", type: LONG_TEXT },
          ts("create_time"),
          ts("update_time"),
        ],
        indices: [new TableIndex({ name: "ix_a2a_tasks_update_time", columnNames: ["update_time"] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("a2a_tasks");
  }
}

import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { money, str, ts } from "./columns.js";

// Token usage and internal cost of each language model completion, per job (internal accounting).
export class LlmUsage1795400000000 implements MigrationInterface {
  name = "LlmUsage1795400000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "llm_usage",
        columns: [
          { ...str("usage_id", 32), isPrimary: true },
          str("account_to", 64),
          str("family", 64),
          str("model", 200),
          { name: "prompt_tokens", type: "integer" },
          { name: "completion_tokens", type: "integer" },
          money("cost_micro_usd"),
          { name: "ok", type: "boolean" },
          { name: "repair", type: "boolean" },
          str("error", 500, true),
          ts("create_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_llm_usage_account", columnNames: ["account_to"] }),
          new TableIndex({ name: "ix_llm_usage_time", columnNames: ["create_time"] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("llm_usage");
  }
}

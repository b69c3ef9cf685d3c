import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// Price alerts of oracle.alert-generator and their history of state changes.
export class PriceAlerts1795360000000 implements MigrationInterface {
  name = "PriceAlerts1795360000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "price_alerts",
        columns: [
          { ...str("alert_id", 32), isPrimary: true },
          str("owner", 42),
          str("payment_id", 32),
          str("pair", 24),
          str("venue", 16),
          str("alert_condition", 16),
          str("threshold", 48),
          str("reference_price", 48, true),
          { name: "max_age_seconds", type: "integer" },
          str("state", 8),
          ts("fired_at", true),
          str("fired_price", 48, true),
          str("last_price", 48, true),
          ts("last_data_time", true),
          ts("last_read_time", true),
          str("last_endpoint", 512, true),
          ts("last_eval_time", true),
          str("last_error", 512, true),
          { name: "evaluations", type: "integer" },
          ts("create_time"),
          ts("expire_time"),
          ts("next_eval_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_price_alerts_due", columnNames: ["state", "next_eval_time"] }),
          new TableIndex({ name: "ix_price_alerts_owner", columnNames: ["owner", "state"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "price_alert_events",
        columns: [
          { ...str("event_id", 32), isPrimary: true },
          str("alert_id", 32),
          { name: "evaluation", type: "integer" },
          ts("event_time"),
          str("state", 8),
          str("price", 48, true),
          ts("data_time", true),
          str("endpoint", 512, true),
          str("note", 512),
        ],
        indices: [new TableIndex({ name: "ix_price_alert_events_alert", columnNames: ["alert_id", "evaluation"] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("price_alert_events");
    await q.dropTable("price_alerts");
  }
}

import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { money, str, ts } from "./columns.js";

// Agents, starter-credit notes, the webhook outbox and the comped-audit counters (the registry issue).


export class Registry1795310000000 implements MigrationInterface {
  name = "Registry1795310000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "agents",
        columns: [
          { ...str("agent_id", 24), isPrimary: true },
          str("name", 64),
          str("name_key", 64),
          str("tier", 16),
          { name: "capabilities_json", type: "text" },
          str("evm_address", 42, true),
          str("api_key_id", 16),
          str("api_key_hash", 64),
          str("callback_url", 2048, true),
          str("callback_secret_enc", 256, true),
          { name: "callback_events_json", type: "text", isNullable: true },
          str("identity_network", 32, true),
          str("identity_registry", 42, true),
          str("identity_agent_id", 78, true),
          str("identity_owner", 42, true),
          ts("create_time"),
          ts("update_time"),
        ],
        indices: [
          new TableIndex({ name: "uq_agents_name_key", columnNames: ["name_key"], isUnique: true }),
          new TableIndex({ name: "uq_agents_api_key_id", columnNames: ["api_key_id"], isUnique: true }),
          new TableIndex({ name: "ix_agents_evm_address", columnNames: ["evm_address"] }),
          new TableIndex({ name: "ix_agents_identity_owner", columnNames: ["identity_owner"] }),
          new TableIndex({ name: "uq_agents_identity", columnNames: ["identity_network", "identity_registry", "identity_agent_id"], isUnique: true }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "starter_notes",
        columns: [
          { ...str("note_id", 24), isPrimary: true },
          str("agent_id", 24),
          str("secret_hash", 64),
          money("budget"),
          str("status", 16),
          ts("create_time"),
        ],
        indices: [new TableIndex({ name: "ix_starter_notes_agent", columnNames: ["agent_id"] })],
      }),
    );
    await q.createTable(
      new Table({
        name: "webhook_events",
        columns: [
          { ...str("event_id", 32), isPrimary: true },
          str("agent_id", 24),
          str("event_type", 48),
          { name: "payload_json", type: "text" },
          str("state", 16),
          { name: "attempts", type: "integer", default: 0 },
          ts("next_attempt_time", true),
          { name: "last_status", type: "integer", isNullable: true },
          str("last_error", 512, true),
          ts("create_time"),
          ts("delivered_time", true),
        ],
        indices: [
          new TableIndex({ name: "ix_webhook_events_due", columnNames: ["state", "next_attempt_time"] }),
          new TableIndex({ name: "ix_webhook_events_agent", columnNames: ["agent_id"] }),
        ],
      }),
    );
    await q.createTable(new Table({ name: "comp_days", columns: [{ ...str("day", 10), isPrimary: true }, { name: "granted", type: "integer" }] }));
    await q.createTable(
      new Table({
        name: "comp_grants",
        columns: [{ ...str("comp_id", 32), isPrimary: true }, str("agent_id", 24), str("day", 10), ts("create_time")],
        indices: [new TableIndex({ name: "uq_comp_grants_agent", columnNames: ["agent_id"], isUnique: true })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["comp_grants", "comp_days", "webhook_events", "starter_notes", "agents"]) await q.dropTable(table);
  }
}

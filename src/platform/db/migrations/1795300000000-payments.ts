import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { LONG_TEXT } from "../column-types.js";
import { money, str, ts } from "./columns.js";

// Payments, async jobs, the proof rail, the ledger and seals (the payments issue).

export class Payments1795300000000 implements MigrationInterface {
  name = "Payments1795300000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "x402_payments",
        columns: [
          { ...str("payment_id", 32), isPrimary: true },
          str("payment_key", 64),
          str("network", 32),
          str("asset", 42),
          str("payer", 42),
          str("nonce", 66),
          str("sku_id", 64),
          money("amount"),
          { name: "x402_version", type: "integer" },
          str("state", 16),
          { name: "payload_json", type: "text" },
          { name: "requirements_json", type: "text" },
          { name: "response_json", type: LONG_TEXT, isNullable: true },
          str("tx_hash", 66, true),
          str("job_id", 32, true),
          str("error_reason", 128, true),
          str("refund_tx_hash", 66, true),
          ts("create_time"),
          ts("update_time"),
        ],
        indices: [
          new TableIndex({ name: "uq_x402_payments_key", columnNames: ["payment_key"], isUnique: true }),
          new TableIndex({ name: "uq_x402_payments_tx", columnNames: ["tx_hash"], isUnique: true }),
          new TableIndex({ name: "ix_x402_payments_payer", columnNames: ["payer"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "service_jobs",
        columns: [
          { ...str("job_id", 32), isPrimary: true },
          str("sku_id", 64),
          str("payment_id", 32),
          str("payer", 42),
          { name: "input_json", type: LONG_TEXT },
          str("state", 16),
          { name: "result_json", type: LONG_TEXT, isNullable: true },
          str("error", 512, true),
          { name: "attempts", type: "integer", default: 0 },
          ts("lease_until", true),
          ts("create_time"),
          ts("finish_time", true),
        ],
        indices: [new TableIndex({ name: "ix_service_jobs_claim", columnNames: ["state", "lease_until"] })],
      }),
    );
    await q.createTable(
      new Table({
        name: "proof_records",
        columns: [
          { name: "sequence", type: "integer", isPrimary: true, isGenerated: true, generationStrategy: "increment" },
          str("proof_id", 32),
          { name: "kind", type: "integer" },
          str("settlement_ref", 66, true),
          str("task_class", 64),
          ts("ts"),
          { name: "body_json", type: "text" },
          str("record_sha256", 64),
          str("integrity_signature", 64),
        ],
        indices: [
          new TableIndex({ name: "uq_proof_records_id", columnNames: ["proof_id"], isUnique: true }),
          new TableIndex({ name: "uq_proof_records_kind_ref", columnNames: ["kind", "settlement_ref"], isUnique: true }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "ledger_entries",
        columns: [{ ...str("entry_id", 32), isPrimary: true }, str("kind", 32), str("ref", 96), ts("create_time")],
        indices: [new TableIndex({ name: "uq_ledger_entries_event", columnNames: ["kind", "ref"], isUnique: true })],
      }),
    );
    await q.createTable(
      new Table({
        name: "ledger_postings",
        columns: [
          { name: "posting_id", type: "integer", isPrimary: true, isGenerated: true, generationStrategy: "increment" },
          str("entry_id", 32),
          str("account", 96),
          money("amount"),
        ],
        indices: [
          new TableIndex({ name: "ix_ledger_postings_entry", columnNames: ["entry_id"] }),
          new TableIndex({ name: "ix_ledger_postings_account", columnNames: ["account"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "seals",
        columns: [
          { ...str("seal_id", 32), isPrimary: true },
          str("content_sha256", 64),
          str("producer", 128),
          ts("produced_at"),
          str("payer", 42),
          str("signature", 64),
          ts("sealed_at"),
          ts("used_at", true),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["seals", "ledger_postings", "ledger_entries", "proof_records", "service_jobs", "x402_payments"]) {
      await q.dropTable(table);
    }
  }
}

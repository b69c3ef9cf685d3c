import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { LONG_TEXT } from "../column-types.js";
import { money, str, ts } from "./columns.js";

// Requests, bids, jobs and payouts (the marketplace issue).

export class Marketplace1795320000000 implements MigrationInterface {
  name = "Marketplace1795320000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "market_requests",
        columns: [
          { ...str("request_id", 32), isPrimary: true },
          str("requester_agent_id", 24),
          str("note_id", 24),
          str("capability_id", 64),
          { name: "task_description", type: "text" },
          money("budget"),
          { name: "tags_json", type: "text" },
          { name: "witness_optout", type: "boolean" },
          str("state", 16),
          ts("create_time"),
          ts("expire_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_market_requests_open", columnNames: ["state", "create_time"] }),
          new TableIndex({ name: "ix_market_requests_requester", columnNames: ["requester_agent_id"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_bids",
        columns: [
          { ...str("bid_id", 32), isPrimary: true },
          str("request_id", 32),
          str("provider_agent_id", 24),
          str("capability_id", 64),
          str("agent_name", 64),
          str("display_name", 128),
          { ...money("price"), isNullable: true },
          { name: "eta_seconds", type: "integer", isNullable: true },
          str("state", 16),
          ts("create_time"),
        ],
        indices: [new TableIndex({ name: "uq_market_bids_provider", columnNames: ["request_id", "provider_agent_id"], isUnique: true })],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_jobs",
        columns: [
          { ...str("job_id", 32), isPrimary: true },
          str("request_id", 32),
          str("bid_id", 32),
          str("provider_agent_id", 24),
          str("requester_agent_id", 24),
          money("amount"),
          str("state", 16),
          { name: "result_summary", type: "text", isNullable: true },
          { name: "deliverable", type: LONG_TEXT, isNullable: true },
          str("content_sha256", 64, true),
          ts("create_time"),
          ts("complete_time", true),
        ],
        indices: [
          new TableIndex({ name: "uq_market_jobs_request", columnNames: ["request_id"], isUnique: true }),
          new TableIndex({ name: "ix_market_jobs_provider", columnNames: ["provider_agent_id"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "payouts",
        columns: [
          { ...str("payout_id", 32), isPrimary: true },
          str("job_id", 32),
          str("provider_agent_id", 24),
          money("gross"),
          { name: "fee_bps", type: "integer" },
          money("fee"),
          money("net"),
          { name: "dynamic_fee_bps", type: "integer" },
          str("state", 16),
          str("rail", 16, true),
          str("tx_hash", 66, true),
          { name: "sent_hashes_json", type: "text", isNullable: true },
          ts("create_time"),
          ts("release_time", true),
        ],
        indices: [
          new TableIndex({ name: "uq_payouts_job", columnNames: ["job_id"], isUnique: true }),
          new TableIndex({ name: "ix_payouts_state", columnNames: ["state"] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["payouts", "market_jobs", "market_bids", "market_requests"]) await q.dropTable(table);
  }
}

import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { money, str, ts } from "./columns.js";

// The markets API: LMSR markets and their positions, plan subscriptions, ecash receipts, per-day call
// counters of the tiers, and Operator fleets (src/markets/markets.entity.ts).
export class Markets1795440000000 implements MigrationInterface {
  name = "Markets1795440000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "markets",
        columns: [
          { ...str("market_id", 32), isPrimary: true },
          str("title", 200),
          { name: "description", type: "text" },
          str("category", 16),
          str("state", 16),
          str("outcome", 8, true),
          money("liquidity_b"),
          money("subsidy"),
          money("q_yes"),
          money("q_no"),
          money("yes_stake"),
          money("no_stake"),
          money("volume"),
          { name: "positions_count", type: "integer" },
          ts("close_time"),
          ts("create_time"),
          ts("resolve_time", true),
        ],
        indices: [
          new TableIndex({ name: "ix_markets_state_close", columnNames: ["state", "close_time"] }),
          new TableIndex({ name: "ix_markets_category", columnNames: ["category"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_positions",
        columns: [
          { ...str("position_id", 32), isPrimary: true },
          str("market_id", 32),
          str("agent_id", 24),
          str("outcome", 8),
          money("paid"),
          money("fee"),
          money("fee_share"),
          str("fleet_operator_id", 24, true),
          money("stake"),
          money("shares"),
          { name: "yes_prob_before", type: "double" },
          { name: "yes_prob_after", type: "double" },
          str("paid_with", 16),
          str("redemption_id", 64, true),
          str("state", 8),
          money("payout"),
          ts("create_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_market_positions_market_time", columnNames: ["market_id", "create_time"] }),
          new TableIndex({ name: "ix_market_positions_agent", columnNames: ["agent_id"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_subscriptions",
        columns: [
          { ...str("subscription_id", 32), isPrimary: true },
          str("agent_id", 24),
          str("plan", 16),
          ts("start_time"),
          ts("end_time"),
          money("price_sats"),
          { ...money("price_atomic"), isNullable: true },
          str("paid_with", 16),
          str("payment_id", 32, true),
          ts("create_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_market_subscriptions_agent_end", columnNames: ["agent_id", "end_time"] }),
          new TableIndex({ name: "uq_market_subscriptions_payment", columnNames: ["payment_id"], isUnique: true }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_ecash_receipts",
        columns: [{ ...str("redemption_id", 64), isPrimary: true }, str("agent_id", 24), str("mint", 255), money("amount"), str("purpose", 16), str("applied_to", 32, true), ts("create_time")],
        indices: [new TableIndex({ name: "ix_market_ecash_receipts_agent", columnNames: ["agent_id"] })],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_usage_days",
        columns: [{ ...str("agent_id", 24), isPrimary: true }, { ...str("day", 10), isPrimary: true }, { name: "calls", type: "integer" }],
      }),
    );
    await q.createTable(
      new Table({
        name: "market_fleet_members",
        columns: [{ ...str("agent_id", 24), isPrimary: true }, str("operator_agent_id", 24), ts("join_time")],
        indices: [new TableIndex({ name: "ix_market_fleet_members_operator", columnNames: ["operator_agent_id"] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["market_fleet_members", "market_usage_days", "market_ecash_receipts", "market_subscriptions", "market_positions", "markets"]) await q.dropTable(table);
  }
}

import { Table, type MigrationInterface, type QueryRunner } from "typeorm";
import { str } from "./columns.js";

// State shared by every process of a cluster: payer rate limits, circuit breakers, sending-key nonces.
export class ClusterState1795480000000 implements MigrationInterface {
  name = "ClusterState1795480000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(new Table({ name: "payer_rate_limits", columns: [{ ...str("payer", 64), isPrimary: true }, { name: "tat_us", type: "bigint" }] }));
    await q.createTable(
      new Table({
        name: "circuit_breakers",
        columns: [
          { ...str("upstream", 255), isPrimary: true },
          { name: "failures", type: "integer" },
          { name: "opened_ms", type: "bigint", isNullable: true },
          { name: "trial_until_ms", type: "bigint", isNullable: true },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "chain_nonces",
        columns: [
          { ...str("chain_key", 100), isPrimary: true },
          { ...str("address", 42), isPrimary: true },
          { name: "next_nonce", type: "bigint" },
          { name: "updated_ms", type: "bigint" },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["chain_nonces", "circuit_breakers", "payer_rate_limits"]) await q.dropTable(table);
  }
}

import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { money, str, ts } from "./columns.js";

// Ecash received from Cashu tokens: redemptions, the Ys of the proofs redeemed (unique: each proof is
// accepted once), and the fresh proofs the service holds (secrets sealed).
export class Ecash1795450000000 implements MigrationInterface {
  name = "Ecash1795450000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: "ecash_redemptions",
        columns: [
          { ...str("redemption_id", 32), isPrimary: true },
          str("mint", 512),
          str("unit", 16),
          money("amount"),
          money("fee"),
          money("received"),
          money("min_amount"),
          str("purpose", 200),
          str("state", 16),
          str("token_digest", 64),
          str("error", 300, true),
          ts("create_time"),
          ts("update_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_ecash_redemptions_state", columnNames: ["state", "update_time"] }),
          new TableIndex({ name: "ix_ecash_redemptions_digest", columnNames: ["token_digest"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "ecash_inputs",
        columns: [{ ...str("y", 66), isPrimary: true }, str("redemption_id", 32), str("keyset_id", 66), money("amount")],
        indices: [new TableIndex({ name: "ix_ecash_inputs_redemption", columnNames: ["redemption_id"] })],
      }),
    );
    await q.createTable(
      new Table({
        name: "ecash_proofs",
        columns: [
          { ...str("y", 66), isPrimary: true },
          str("redemption_id", 32),
          str("mint", 512),
          str("keyset_id", 66),
          money("amount"),
          str("secret", 512),
          str("c", 66, true),
          str("b_", 66),
          str("blinding", 512, true),
          str("state", 16),
          ts("create_time"),
          ts("update_time"),
        ],
        indices: [
          new TableIndex({ name: "ix_ecash_proofs_redemption", columnNames: ["redemption_id"] }),
          new TableIndex({ name: "ix_ecash_proofs_mint_state", columnNames: ["mint", "state"] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable("ecash_proofs");
    await q.dropTable("ecash_inputs");
    await q.dropTable("ecash_redemptions");
  }
}

import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// Leases on the rows whose on-chain transaction one server sends at a time, so a server starting (or a
// periodic retry) never re-sends a refund, payout or anchor another live server is sending: the holder
// and until when it holds the row, plus the refund's broadcast hashes and their nonce.
export class SendLeases1795530000000 implements MigrationInterface {
  name = "SendLeases1795530000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns("x402_payments", [
      new TableColumn(str("refund_holder", 64, true)),
      new TableColumn(ts("refund_lease_until", true)),
      new TableColumn({ name: "refund_sent_json", type: "text", isNullable: true }),
    ]);
    await q.addColumns("payouts", [new TableColumn(str("release_holder", 64, true)), new TableColumn(ts("release_lease_until", true))]);
    await q.addColumns("proof_anchors", [new TableColumn(ts("lease_until", true))]);
    // Every server looks for stale pending anchors on each anchoring poll.
    await q.createIndex("proof_anchors", new TableIndex({ name: "ix_proof_anchors_state", columnNames: ["state", "lease_until"] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex("proof_anchors", "ix_proof_anchors_state");
    await q.dropColumns("proof_anchors", ["lease_until"]);
    await q.dropColumns("payouts", ["release_holder", "release_lease_until"]);
    await q.dropColumns("x402_payments", ["refund_holder", "refund_lease_until", "refund_sent_json"]);
  }
}

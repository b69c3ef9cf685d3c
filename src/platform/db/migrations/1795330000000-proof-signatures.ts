import { TableColumn, type MigrationInterface, type QueryRunner } from "typeorm";

// Ed25519 signatures on proof records (the proof-rail issue).
export class ProofSignatures1795330000000 implements MigrationInterface {
  name = "ProofSignatures1795330000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("proof_records", new TableColumn({ name: "ed25519_signature", type: "varchar", length: "128", isNullable: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn("proof_records", "ed25519_signature");
  }
}

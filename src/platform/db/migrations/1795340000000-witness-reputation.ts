import { Table, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";
import { str, ts } from "./columns.js";

// Witness enrollments and attestations, computed reputation, scheduler leases (the witness issue).
export class WitnessReputation1795340000000 implements MigrationInterface {
  name = "WitnessReputation1795340000000";

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(new Table({ name: "witness_enrollments", columns: [{ ...str("agent_id", 24), isPrimary: true }, { name: "families_json", type: "text" }, ts("enroll_time")] }));
    await q.createTable(
      new Table({
        name: "attestations",
        columns: [
          { ...str("attestation_id", 32), isPrimary: true },
          str("job_id", 32),
          str("witness_agent_id", 24),
          str("verdict", 16),
          str("content_sha256", 64),
          { name: "reason", type: "text" },
          { name: "credited", type: "boolean" },
          str("day", 10),
          str("proof_id", 32),
          ts("create_time"),
        ],
        indices: [
          new TableIndex({ name: "uq_attestations_job_witness", columnNames: ["job_id", "witness_agent_id"], isUnique: true }),
          new TableIndex({ name: "ix_attestations_job", columnNames: ["job_id"] }),
          new TableIndex({ name: "ix_attestations_witness", columnNames: ["witness_agent_id"] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: "reputation_scores",
        columns: [
          { ...str("agent_id", 24), isPrimary: true },
          { name: "score", type: "double" },
          { name: "components_json", type: "text" },
          str("badge", 16),
          { name: "proofs", type: "integer" },
          { name: "completed_jobs", type: "integer" },
          { name: "failed_jobs", type: "integer" },
          { name: "disputes", type: "integer" },
          { name: "trend_json", type: "text" },
          ts("compute_time"),
        ],
      }),
    );
    await q.createTable(new Table({ name: "scheduler_leases", columns: [{ ...str("name", 64), isPrimary: true }, str("holder", 64), ts("lease_until")] }));
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ["scheduler_leases", "reputation_scores", "attestations", "witness_enrollments"]) await q.dropTable(table);
  }
}

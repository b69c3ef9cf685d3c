import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from "typeorm";

// Async jobs carry a claim priority (the Operator tier's priority queue): claimed highest first, then oldest.
export class JobPriority1795470000000 implements MigrationInterface {
  name = "JobPriority1795470000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("service_jobs", new TableColumn({ name: "priority", type: "integer", default: 0 }));
    await q.createIndex("service_jobs", new TableIndex({ name: "ix_service_jobs_priority", columnNames: ["state", "priority", "create_time"] }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex("service_jobs", "ix_service_jobs_priority");
    await q.dropColumn("service_jobs", "priority");
  }
}

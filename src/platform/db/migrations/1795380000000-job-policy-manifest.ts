import { TableColumn, type MigrationInterface, type QueryRunner } from "typeorm";
import { LONG_TEXT } from "../column-types.js";

// An async job keeps the policy manifest of the call that paid for it, for its deliverable's svc_trust.
export class JobPolicyManifest1795380000000 implements MigrationInterface {
  name = "JobPolicyManifest1795380000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("service_jobs", new TableColumn({ name: "manifest_json", type: LONG_TEXT, isNullable: true }));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn("service_jobs", "manifest_json");
  }
}

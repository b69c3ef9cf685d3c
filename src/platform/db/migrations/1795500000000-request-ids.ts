import { TableColumn, type MigrationInterface, type QueryRunner } from "typeorm";
import { str } from "./columns.js";

// The request id of the request that created an async job or a webhook event, carried into the worker's
// and the dispatcher's logs and sent as X-Request-Id with the webhook (null: created outside a request).
export class RequestIds1795500000000 implements MigrationInterface {
  name = "RequestIds1795500000000";

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn("service_jobs", new TableColumn(str("request_id", 128, true)));
    await q.addColumn("webhook_events", new TableColumn(str("request_id", 128, true)));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn("webhook_events", "request_id");
    await q.dropColumn("service_jobs", "request_id");
  }
}

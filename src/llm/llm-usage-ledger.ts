import type { DataSource } from "typeorm";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { LlmUsageEntity } from "./llm-usage.entity.js";

// Writes each completion's usage row (internal accounting). Rows are written outside the job's
// transaction: tokens spent on a job that then fails or is refunded were still spent.

export interface UsageRow {
  accountTo: string;
  family: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  costMicroUsd: bigint;
  ok: boolean;
  repair: boolean;
  error: string | null;
}

export interface UsageSink {
  record(row: UsageRow): Promise<void>;
}

export class LlmUsageLedger implements UsageSink {
  constructor(private readonly ds: DataSource, private readonly log?: Logger) {}

  async record(row: UsageRow): Promise<void> {
    try {
      await this.ds.manager.insert(LlmUsageEntity, {
        ...row,
        usageId: newId("llmu"),
        accountTo: row.accountTo.slice(0, 64),
        family: row.family.slice(0, 64),
        model: row.model.slice(0, 200),
        error: row.error?.slice(0, 500) ?? null,
        createTime: new Date(),
      });
    } catch (err) {
      // Accounting must not fail a call whose answer was obtained; the loss is logged for the operator.
      this.log?.error({ err, accountTo: row.accountTo, family: row.family }, "LLM usage row not written");
    }
  }

  /** Every row accounted to a job or payment, oldest first (operator tooling and tests). */
  async rowsFor(accountTo: string): Promise<LlmUsageEntity[]> {
    return this.ds.manager.find(LlmUsageEntity, { where: { accountTo }, order: { createTime: "ASC" } });
  }
}

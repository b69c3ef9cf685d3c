import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// One chat completion's token usage and internal cost, accounted to the job or payment that caused it.
// Internal bookkeeping for the operator: never exposed on a public route.
@Entity({ name: "llm_usage" })
export class LlmUsageEntity {
  @PrimaryColumn({ name: "usage_id", type: "varchar", length: 32 })
  usageId!: string;

  /** The job or payment id the tokens are accounted to. */
  @Index("ix_llm_usage_account")
  @Column({ name: "account_to", type: "varchar", length: 64 })
  accountTo!: string;

  /** The SKU family that asked (`translation`, `research`...). */
  @Column({ name: "family", type: "varchar", length: 64 })
  family!: string;

  /** The model as the provider named it in its answer (the requested one when it did not). */
  @Column({ name: "model", type: "varchar", length: 200 })
  model!: string;

  @Column({ name: "prompt_tokens", type: "integer" })
  promptTokens!: number;

  @Column({ name: "completion_tokens", type: "integer" })
  completionTokens!: number;

  /** Internal cost in micro-USD (integer) at the operator's configured prices. */
  @Column({ name: "cost_micro_usd", ...MONEY, transformer: moneyTransformer })
  costMicroUsd!: bigint;

  /** Whether this completion gave a valid answer (false: not JSON or outside the schema, or no completion at all). */
  @Column({ name: "ok", type: "boolean" })
  ok!: boolean;

  /** Whether this completion answered a repair request. */
  @Column({ name: "repair", type: "boolean" })
  repair!: boolean;

  /** Why the completion failed, when it did. */
  @Column({ name: "error", type: "varchar", length: 500, nullable: true })
  error!: string | null;

  @Index("ix_llm_usage_time")
  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

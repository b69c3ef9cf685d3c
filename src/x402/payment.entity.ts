import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { LONG_TEXT, MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

/** Lifecycle of one x402 payment; `settled` moved money, `refunding` is sending it back, `refunded` did. */
export type PaymentState = "verifying" | "rejected" | "running" | "failed" | "settling" | "settled" | "refunding" | "refunded";

// One row per signed payment, identified by (network, asset, payer, nonce): the unique key makes a
// payment run and settle at most once however often or concurrently it is sent.
@Entity({ name: "x402_payments" })
@Index("ix_x402_payments_state", ["state", "updateTime"])
@Index("uq_x402_payments_tx_batch", ["txHash", "batchIndex"], { unique: true })
export class X402PaymentEntity {
  @PrimaryColumn({ name: "payment_id", type: "varchar", length: 32 })
  paymentId!: string;

  /** sha256 of `network|asset|payer|nonce`, lowercased. */
  @Index("uq_x402_payments_key", { unique: true })
  @Column({ name: "payment_key", type: "varchar", length: 64 })
  paymentKey!: string;

  @Column({ name: "network", type: "varchar", length: 32 })
  network!: string;

  @Column({ name: "asset", type: "varchar", length: 42 })
  asset!: string;

  @Index("ix_x402_payments_payer")
  @Column({ name: "payer", type: "varchar", length: 42 })
  payer!: string;

  @Column({ name: "nonce", type: "varchar", length: 66 })
  nonce!: string;

  @Column({ name: "sku_id", type: "varchar", length: 64 })
  skuId!: string;

  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;

  @Column({ name: "x402_version", type: "integer" })
  x402Version!: number;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: PaymentState;

  /** The signed PaymentPayload as received (needed to settle and to reconcile after a crash). */
  @Column({ name: "payload_json", type: "text" })
  payloadJson!: string;

  /** The PaymentRequirements it was verified against. */
  @Column({ name: "requirements_json", type: "text" })
  requirementsJson!: string;

  /** The response returned for this payment; replays get it back unchanged. */
  @Column({ name: "response_json", type: LONG_TEXT, nullable: true })
  responseJson!: string | null;

  @Column({ name: "tx_hash", type: "varchar", length: 66, nullable: true })
  txHash!: string | null;

  /** Index of this payment in a batched settlement transaction (SettlementBatcher); null when settled alone. */
  @Column({ name: "batch_index", type: "integer", nullable: true })
  batchIndex!: number | null;

  @Column({ name: "job_id", type: "varchar", length: 32, nullable: true })
  jobId!: string | null;

  @Column({ name: "error_reason", type: "varchar", length: 128, nullable: true })
  errorReason!: string | null;

  @Column({ name: "refund_tx_hash", type: "varchar", length: 66, nullable: true })
  refundTxHash!: string | null;

  /** The server sending this payment's refund, and until when it holds it (refunds.ts: one sender across a cluster). */
  @Column({ name: "refund_holder", type: "varchar", length: 64, nullable: true })
  refundHolder!: string | null;

  @Column({ name: "refund_lease_until", ...TIMESTAMP, nullable: true })
  refundLeaseUntil!: Date | null;

  /** `{"nonce": n, "hashes": [...]}` of the refund's broadcasts (one nonce; re-sends raise the fee). */
  @Column({ name: "refund_sent_json", type: "text", nullable: true })
  refundSentJson!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "update_time", ...TIMESTAMP })
  updateTime!: Date;
}

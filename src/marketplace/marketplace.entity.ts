import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { LONG_TEXT, MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// Marketplace records. Balances are never stored here: escrow, job holds and payables live in the
// ledger; these rows carry states and amounts agreed.

export type RequestState = "open" | "assigned" | "completed" | "cancelled" | "expired";
export type BidState = "submitted" | "accepted" | "rejected" | "withdrawn";
export type JobState = "assigned" | "completed" | "paid" | "failed";
/** `cancelled`: an upheld dispute returned the job's price to the requester before release. */
export type PayoutState = "pending" | "releasing" | "released" | "cancelled";

@Entity({ name: "market_requests" })
@Index("ix_market_requests_open", ["state", "createTime"])
export class MarketRequestEntity {
  @PrimaryColumn({ name: "request_id", type: "varchar", length: 32 })
  requestId!: string;

  @Index("ix_market_requests_requester")
  @Column({ name: "requester_agent_id", type: "varchar", length: 24 })
  requesterAgentId!: string;

  @Column({ name: "note_id", type: "varchar", length: 24 })
  noteId!: string;

  @Column({ name: "capability_id", type: "varchar", length: 64 })
  capabilityId!: string;

  @Column({ name: "task_description", type: "text" })
  taskDescription!: string;

  @Column({ name: "budget", ...MONEY, transformer: moneyTransformer })
  budget!: bigint;

  @Column({ name: "tags_json", type: "text" })
  tagsJson!: string;

  @Column({ name: "witness_optout", type: "boolean" })
  witnessOptout!: boolean;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: RequestState;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "expire_time", ...TIMESTAMP })
  expireTime!: Date;
}

@Entity({ name: "market_bids" })
@Index("uq_market_bids_provider", ["requestId", "providerAgentId"], { unique: true })
export class MarketBidEntity {
  @PrimaryColumn({ name: "bid_id", type: "varchar", length: 32 })
  bidId!: string;

  @Column({ name: "request_id", type: "varchar", length: 32 })
  requestId!: string;

  @Column({ name: "provider_agent_id", type: "varchar", length: 24 })
  providerAgentId!: string;

  @Column({ name: "capability_id", type: "varchar", length: 64 })
  capabilityId!: string;

  @Column({ name: "agent_name", type: "varchar", length: 64 })
  agentName!: string;

  @Column({ name: "display_name", type: "varchar", length: 128 })
  displayName!: string;

  @Column({ name: "price", ...MONEY, transformer: moneyTransformer, nullable: true })
  price!: bigint | null;

  @Column({ name: "eta_seconds", type: "integer", nullable: true })
  etaSeconds!: number | null;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: BidState;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

@Entity({ name: "market_jobs" })
export class MarketJobEntity {
  @PrimaryColumn({ name: "job_id", type: "varchar", length: 32 })
  jobId!: string;

  /** One job per request: a second accept loses on this index. */
  @Index("uq_market_jobs_request", { unique: true })
  @Column({ name: "request_id", type: "varchar", length: 32 })
  requestId!: string;

  @Column({ name: "bid_id", type: "varchar", length: 32 })
  bidId!: string;

  @Index("ix_market_jobs_provider")
  @Column({ name: "provider_agent_id", type: "varchar", length: 24 })
  providerAgentId!: string;

  @Column({ name: "requester_agent_id", type: "varchar", length: 24 })
  requesterAgentId!: string;

  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: JobState;

  @Column({ name: "result_summary", type: "text", nullable: true })
  resultSummary!: string | null;

  @Column({ name: "deliverable", type: LONG_TEXT, nullable: true })
  deliverable!: string | null;

  @Column({ name: "content_sha256", type: "varchar", length: 64, nullable: true })
  contentSha256!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "complete_time", ...TIMESTAMP, nullable: true })
  completeTime!: Date | null;
}

@Entity({ name: "payouts" })
export class PayoutEntity {
  @PrimaryColumn({ name: "payout_id", type: "varchar", length: 32 })
  payoutId!: string;

  @Index("uq_payouts_job", { unique: true })
  @Column({ name: "job_id", type: "varchar", length: 32 })
  jobId!: string;

  @Column({ name: "provider_agent_id", type: "varchar", length: 24 })
  providerAgentId!: string;

  @Column({ name: "gross", ...MONEY, transformer: moneyTransformer })
  gross!: bigint;

  @Column({ name: "fee_bps", type: "integer" })
  feeBps!: number;

  @Column({ name: "fee", ...MONEY, transformer: moneyTransformer })
  fee!: bigint;

  @Column({ name: "net", ...MONEY, transformer: moneyTransformer })
  net!: bigint;

  @Column({ name: "dynamic_fee_bps", type: "integer" })
  dynamicFeeBps!: number;

  @Index("ix_payouts_state")
  @Column({ name: "state", type: "varchar", length: 16 })
  state!: PayoutState;

  @Column({ name: "rail", type: "varchar", length: 16, nullable: true })
  rail!: string | null;

  @Column({ name: "tx_hash", type: "varchar", length: 66, nullable: true })
  txHash!: string | null;

  /** `{"nonce": n, "hashes": [...]}` of every transfer signed for this payout (stored before broadcast; a re-send has a new hash; rows from before hold a bare array): whichever is mined is the payment. */
  @Column({ name: "sent_hashes_json", type: "text", nullable: true })
  sentHashesJson!: string | null;

  /** The server releasing this payout, and until when it holds it (payout-releaser.ts). */
  @Column({ name: "release_holder", type: "varchar", length: 64, nullable: true })
  releaseHolder!: string | null;

  @Column({ name: "release_lease_until", ...TIMESTAMP, nullable: true })
  releaseLeaseUntil!: Date | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  /** When the release was claimed, then when it completed. */
  @Column({ name: "release_time", ...TIMESTAMP, nullable: true })
  releaseTime!: Date | null;
}

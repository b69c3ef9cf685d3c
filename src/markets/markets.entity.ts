import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// The markets API's records. Money columns are integer sats (share counts integer milli-shares); every
// money move is also one balanced journal entry (markets-ledger.ts), written in the same transaction.

const SATS = { ...MONEY, transformer: moneyTransformer };

@Entity({ name: "markets" })
@Index("ix_markets_state_close", ["state", "closeTime"])
export class MarketEntity {
  @PrimaryColumn({ name: "market_id", type: "varchar", length: 32 })
  marketId!: string;

  @Column({ name: "title", type: "varchar", length: 200 })
  title!: string;

  @Column({ name: "description", type: "text" })
  description!: string;

  @Index("ix_markets_category")
  @Column({ name: "category", type: "varchar", length: 16 })
  category!: string;

  /** `open` (trading until close_time) or `resolved`. */
  @Column({ name: "state", type: "varchar", length: 16 })
  state!: "open" | "resolved";

  @Column({ name: "outcome", type: "varchar", length: 8, nullable: true })
  outcome!: "yes" | "no" | null;

  /** LMSR liquidity b, sats. */
  @Column({ name: "liquidity_b", ...SATS })
  liquidityB!: bigint;

  /** ceil(b ln 2) sats, funded at creation. */
  @Column({ name: "subsidy", ...SATS })
  subsidy!: bigint;

  /** Outstanding yes shares, milli-shares. */
  @Column({ name: "q_yes", ...SATS })
  qYes!: bigint;

  @Column({ name: "q_no", ...SATS })
  qNo!: bigint;

  /** Stakes after fees on each side, sats. */
  @Column({ name: "yes_stake", ...SATS })
  yesStake!: bigint;

  @Column({ name: "no_stake", ...SATS })
  noStake!: bigint;

  /** Stakes including fees, sats. */
  @Column({ name: "volume", ...SATS })
  volume!: bigint;

  @Column({ name: "positions_count", type: "integer" })
  positionsCount!: number;

  @Column({ name: "close_time", ...TIMESTAMP })
  closeTime!: Date;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "resolve_time", ...TIMESTAMP, nullable: true })
  resolveTime!: Date | null;
}

@Entity({ name: "market_positions" })
@Index("ix_market_positions_market_time", ["marketId", "createTime"])
export class MarketPositionEntity {
  @PrimaryColumn({ name: "position_id", type: "varchar", length: 32 })
  positionId!: string;

  @Column({ name: "market_id", type: "varchar", length: 32 })
  marketId!: string;

  @Index("ix_market_positions_agent")
  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "outcome", type: "varchar", length: 8 })
  outcome!: "yes" | "no";

  /** What was paid (stake + fee), sats. */
  @Column({ name: "paid", ...SATS })
  paid!: bigint;

  @Column({ name: "fee", ...SATS })
  fee!: bigint;

  /** Part of the fee credited to the payer's fleet operator (revenue share), sats. */
  @Column({ name: "fee_share", ...SATS })
  feeShare!: bigint;

  @Column({ name: "fleet_operator_id", type: "varchar", length: 24, nullable: true })
  fleetOperatorId!: string | null;

  /** Stake after fee (what bought shares), sats. */
  @Column({ name: "stake", ...SATS })
  stake!: bigint;

  /** Shares bought, milli-shares. */
  @Column({ name: "shares", ...SATS })
  shares!: bigint;

  @Column({ name: "yes_prob_before", type: "double" })
  yesProbBefore!: number;

  @Column({ name: "yes_prob_after", type: "double" })
  yesProbAfter!: number;

  @Column({ name: "paid_with", type: "varchar", length: 16 })
  paidWith!: "ecash" | "balance";

  @Column({ name: "redemption_id", type: "varchar", length: 64, nullable: true })
  redemptionId!: string | null;

  /** `open` until resolution, then `won` or `lost`. */
  @Column({ name: "state", type: "varchar", length: 8 })
  state!: "open" | "won" | "lost";

  @Column({ name: "payout", ...SATS })
  payout!: bigint;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

@Entity({ name: "market_subscriptions" })
@Index("ix_market_subscriptions_agent_end", ["agentId", "endTime"])
export class MarketSubscriptionEntity {
  @PrimaryColumn({ name: "subscription_id", type: "varchar", length: 32 })
  subscriptionId!: string;

  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "plan", type: "varchar", length: 16 })
  plan!: "contributor" | "operator" | "compliance";

  @Column({ name: "start_time", ...TIMESTAMP })
  startTime!: Date;

  @Column({ name: "end_time", ...TIMESTAMP })
  endTime!: Date;

  /** Price in sats (ecash plans), 0 otherwise. */
  @Column({ name: "price_sats", ...SATS })
  priceSats!: bigint;

  /** Price in atomic USDC (compliance plan), null otherwise. */
  @Column({ name: "price_atomic", ...SATS, nullable: true })
  priceAtomic!: bigint | null;

  @Column({ name: "paid_with", type: "varchar", length: 16 })
  paidWith!: "ecash" | "balance" | "x402";

  /** The x402 payment of a compliance plan (one subscription per payment). */
  @Index("uq_market_subscriptions_payment", { unique: true })
  @Column({ name: "payment_id", type: "varchar", length: 32, nullable: true })
  paymentId!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

/** Ecash the markets API received: one row per redemption, with what it paid for. */
@Entity({ name: "market_ecash_receipts" })
export class MarketEcashReceiptEntity {
  @PrimaryColumn({ name: "redemption_id", type: "varchar", length: 64 })
  redemptionId!: string;

  @Index("ix_market_ecash_receipts_agent")
  @Column({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Column({ name: "mint", type: "varchar", length: 255 })
  mint!: string;

  /** The token's full value, sats. */
  @Column({ name: "amount", ...SATS })
  amount!: bigint;

  /** `stake`, `subscription`, or `credit` (a stake or plan that could not be applied: credited to the balance). */
  @Column({ name: "purpose", type: "varchar", length: 16 })
  purpose!: "stake" | "subscription" | "credit";

  /** Position or subscription it paid for; null for a credit. */
  @Column({ name: "applied_to", type: "varchar", length: 32, nullable: true })
  appliedTo!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

/** Calls per agent per UTC day, incremented atomically by every server (the tiers' daily limits). */
@Entity({ name: "market_usage_days" })
export class MarketUsageDayEntity {
  @PrimaryColumn({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  /** UTC day, YYYY-MM-DD. */
  @PrimaryColumn({ name: "day", type: "varchar", length: 10 })
  day!: string;

  @Column({ name: "calls", type: "integer" })
  calls!: number;
}

/** An agent listed in an Operator's fleet (one fleet per agent, joined by the member itself). */
@Entity({ name: "market_fleet_members" })
export class MarketFleetMemberEntity {
  @PrimaryColumn({ name: "agent_id", type: "varchar", length: 24 })
  agentId!: string;

  @Index("ix_market_fleet_members_operator")
  @Column({ name: "operator_agent_id", type: "varchar", length: 24 })
  operatorAgentId!: string;

  @Column({ name: "join_time", ...TIMESTAMP })
  joinTime!: Date;
}

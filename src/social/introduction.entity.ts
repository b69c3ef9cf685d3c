import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// A verified introduction (social.verified_introduction): who introduced whom, the delegation chain that
// was verified, and the webhook events that notified both agents. One per paid call.
@Entity({ name: "introductions" })
export class IntroductionEntity {
  @PrimaryColumn({ name: "introduction_id", type: "varchar", length: 32 })
  introductionId!: string;

  @Index("uq_introductions_payment", { unique: true })
  @Column({ name: "payment_id", type: "varchar", length: 32 })
  paymentId!: string;

  @Column({ name: "payer", type: "varchar", length: 42 })
  payer!: string;

  @Index("ix_introductions_introducer")
  @Column({ name: "introducer_agent_id", type: "varchar", length: 24 })
  introducerAgentId!: string;

  @Index("ix_introductions_agent_a")
  @Column({ name: "agent_a_id", type: "varchar", length: 24 })
  agentAId!: string;

  @Index("ix_introductions_agent_b")
  @Column({ name: "agent_b_id", type: "varchar", length: 24 })
  agentBId!: string;

  @Column({ name: "message", type: "text" })
  message!: string;

  @Column({ name: "purpose", type: "varchar", length: 200, nullable: true })
  purpose!: string | null;

  /** The verified links, canonical JSON (wallet -> on-chain identity -> registered agent -> introduction). */
  @Column({ name: "delegation_json", type: "text" })
  delegationJson!: string;

  @Column({ name: "event_a_id", type: "varchar", length: 32 })
  eventAId!: string;

  @Column({ name: "event_b_id", type: "varchar", length: 32 })
  eventBId!: string;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

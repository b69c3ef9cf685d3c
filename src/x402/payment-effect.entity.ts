import { Column, Entity, PrimaryColumn } from "typeorm";
import { TIMESTAMP } from "../platform/db/column-types.js";

// The effects outbox: a settled payment whose lasting effects (SkuHandler.commit: a seal row, a
// proof record...) failed to land in the settlement's transaction. The settlement, its proof and
// its ledger entry are recorded regardless; the effect is retried until it lands (then the row goes).
@Entity({ name: "x402_payment_effects" })
export class X402PaymentEffectEntity {
  @PrimaryColumn({ name: "payment_id", type: "varchar", length: 32 })
  paymentId!: string;

  @Column({ name: "attempts", type: "integer" })
  attempts!: number;

  @Column({ name: "last_error", type: "varchar", length: 512 })
  lastError!: string;

  @Column({ name: "next_attempt_time", ...TIMESTAMP })
  nextAttemptTime!: Date;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;
}

import { Column, Entity, Index, PrimaryColumn } from "typeorm";
import { MONEY, moneyTransformer, TIMESTAMP } from "../platform/db/column-types.js";

// Ecash the service received. Three tables:
// - ecash_redemptions: one row per accepted (or attempted) token, what it paid for and how it went;
// - ecash_inputs: the Y = hash_to_curve(secret) of every proof a token carried, unique, so a token
//   (or any proof of it) is redeemed at most once, refused before the mint is even asked;
// - ecash_proofs: the fresh proofs the mint signed for the service in the swap. These are bearer money:
//   `secret` is stored sealed (AES-256-GCM under CASHU_PROOF_KEY) and never logged; only the service
//   code (src/ecash/) opens it, and no route reads this table.

/** `pending`: claimed, swap under way; `interrupted`: the mint did not answer (resumable with the same token); `refused`: the mint refused the swap. */
export type RedemptionState = "pending" | "redeemed" | "interrupted" | "refused";
/** `pending`: outputs sent to the mint, no signature stored yet; `unspent`: held by the service. */
export type EcashProofState = "pending" | "unspent" | "spent";

@Entity({ name: "ecash_redemptions" })
@Index("ix_ecash_redemptions_state", ["state", "updateTime"])
export class EcashRedemptionEntity {
  @PrimaryColumn({ name: "redemption_id", type: "varchar", length: 32 })
  redemptionId!: string;

  /** The mint URL, normalized (as on the CASHU_MINTS allowlist). */
  @Column({ name: "mint", type: "varchar", length: 512 })
  mint!: string;

  @Column({ name: "unit", type: "varchar", length: 16 })
  unit!: string;

  /** The token's full value. */
  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;

  /** The mint's input fee (NUT-02) paid out of the token in the swap. */
  @Column({ name: "fee", ...MONEY, transformer: moneyTransformer })
  fee!: bigint;

  /** What the service holds after the swap: amount - fee. */
  @Column({ name: "received", ...MONEY, transformer: moneyTransformer })
  received!: bigint;

  /** The least the caller required. */
  @Column({ name: "min_amount", ...MONEY, transformer: moneyTransformer })
  minAmount!: bigint;

  @Column({ name: "purpose", type: "varchar", length: 200 })
  purpose!: string;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: RedemptionState;

  /** SHA-256 of the token's sorted input Ys: the same token presented again has the same digest. */
  @Index("ix_ecash_redemptions_digest")
  @Column({ name: "token_digest", type: "varchar", length: 64 })
  tokenDigest!: string;

  @Column({ name: "error", type: "varchar", length: 300, nullable: true })
  error!: string | null;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "update_time", ...TIMESTAMP })
  updateTime!: Date;
}

@Entity({ name: "ecash_inputs" })
export class EcashInputEntity {
  /** Y = hash_to_curve(secret) of a proof the buyer's token carried (compressed point, hex). */
  @PrimaryColumn({ name: "y", type: "varchar", length: 66 })
  y!: string;

  @Index("ix_ecash_inputs_redemption")
  @Column({ name: "redemption_id", type: "varchar", length: 32 })
  redemptionId!: string;

  @Column({ name: "keyset_id", type: "varchar", length: 66 })
  keysetId!: string;

  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;
}

@Entity({ name: "ecash_proofs" })
@Index("ix_ecash_proofs_mint_state", ["mint", "state"])
export class EcashProofEntity {
  /** Y = hash_to_curve(secret): the public handle of the proof (NUT-07 state checks use it). */
  @PrimaryColumn({ name: "y", type: "varchar", length: 66 })
  y!: string;

  @Index("ix_ecash_proofs_redemption")
  @Column({ name: "redemption_id", type: "varchar", length: 32 })
  redemptionId!: string;

  @Column({ name: "mint", type: "varchar", length: 512 })
  mint!: string;

  @Column({ name: "keyset_id", type: "varchar", length: 66 })
  keysetId!: string;

  @Column({ name: "amount", ...MONEY, transformer: moneyTransformer })
  amount!: bigint;

  /** The proof's secret, sealed (AES-256-GCM, CASHU_PROOF_KEY); the mint needs it verbatim to spend the proof. */
  @Column({ name: "secret", type: "varchar", length: 512 })
  secret!: string;

  /** The unblinded signature C (hex); null until the mint's signature is stored. */
  @Column({ name: "c", type: "varchar", length: 66, nullable: true })
  c!: string | null;

  /** The blinded message B_ sent to the mint (NUT-09 restore finds the signature by it). */
  @Column({ name: "b_", type: "varchar", length: 66 })
  blindedMessage!: string;

  /** The blinding factor r, sealed; kept only while the proof is pending (recovery), cleared once C is stored. */
  @Column({ name: "blinding", type: "varchar", length: 512, nullable: true })
  blinding!: string | null;

  @Column({ name: "state", type: "varchar", length: 16 })
  state!: EcashProofState;

  @Column({ name: "create_time", ...TIMESTAMP })
  createTime!: Date;

  @Column({ name: "update_time", ...TIMESTAMP })
  updateTime!: Date;
}

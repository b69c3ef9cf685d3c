import { Column, Entity, PrimaryColumn, type ValueTransformer } from "typeorm";

// State every server and worker process shares through the database (issue 10: no process-local state):
// the payer rate limit, the upstream circuit breakers and the nonce counters of the sending keys.
// Times are the processes' clocks in integer milliseconds or microseconds (BIGINT).

/** BIGINT <-> number (SQLite hands numbers back, MySQL/MariaDB strings); every value here is < 2^53. */
export const bigintNumber: ValueTransformer = {
  to: (v: number | null | undefined) => v,
  from: (v: string | number | null) => (v === null || v === undefined ? v : Number(v)),
};

/** One paying wallet's rate limit as GCRA: the theoretical arrival time of its next call. */
@Entity({ name: "payer_rate_limits" })
export class PayerRateLimitEntity {
  /** Lower-case 0x address. */
  @PrimaryColumn({ name: "payer", type: "varchar", length: 64 })
  payer!: string;

  /** Microseconds since the epoch; a call is admitted while max(tat, now) + interval - now <= burst * interval. */
  @Column({ name: "tat_us", type: "bigint", transformer: bigintNumber })
  tatUs!: number;
}

/** One upstream origin's circuit breaker. */
@Entity({ name: "circuit_breakers" })
export class CircuitBreakerEntity {
  @PrimaryColumn({ name: "upstream", type: "varchar", length: 255 })
  upstream!: string;

  /** Consecutive failures. */
  @Column({ name: "failures", type: "integer" })
  failures!: number;

  /** Milliseconds since the epoch when the breaker opened; null when closed. */
  @Column({ name: "opened_ms", type: "bigint", nullable: true, transformer: bigintNumber })
  openedMs!: number | null;

  /** While half-open: when the admitted trial's lease ends (one trial across the cluster); null when none. */
  @Column({ name: "trial_until_ms", type: "bigint", nullable: true, transformer: bigintNumber })
  trialUntilMs!: number | null;
}

/** The next nonce to hand out for one sending key on one chain, shared by every process using the key. */
@Entity({ name: "chain_nonces" })
export class ChainNonceEntity {
  /** `<chain id>:<genesis block hash>`: a fresh dev chain (same id, new genesis) gets a fresh counter. */
  @PrimaryColumn({ name: "chain_key", type: "varchar", length: 100 })
  chainKey!: string;

  /** Lower-case 0x address of the key. */
  @PrimaryColumn({ name: "address", type: "varchar", length: 42 })
  address!: string;

  @Column({ name: "next_nonce", type: "bigint", transformer: bigintNumber })
  nextNonce!: number;

  /** Milliseconds since the epoch of the last allocation (an idle counter ahead of the chain is stale). */
  @Column({ name: "updated_ms", type: "bigint", transformer: bigintNumber })
  updatedMs!: number;
}

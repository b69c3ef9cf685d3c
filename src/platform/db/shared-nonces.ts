import type { DataSource } from "typeorm";
import { execute, sqlGreatest, sqlInsertIgnore, statement } from "./shared-sql.js";

// Nonces of one sending key on one chain (keyed by chain id and genesis hash, so a restarted dev chain
// starts a fresh counter), handed out through the database so that every process sending
// with the key (servers, workers) gets distinct ones: one row per (chain, address) holding the next nonce.
// An allocation is one UPDATE that bumps the row and hands the new value back in the same round trip
// (SQLite: RETURNING; MySQL/MariaDB, which have no UPDATE ... RETURNING: LAST_INSERT_ID(expr), whose value
// comes back in the statement's OK packet and is per connection). The row lock (SQLite: the write lock)
// orders concurrent allocators across processes.
// The counter never goes below the chain's pending count; a counter left ahead of the chain by
// allocations that were never broadcast (a process died between allocating and sending) and idle for
// `staleMs` is brought back to the chain's pending count, and a younger gap is filled by the sender.

export class SharedNonceCounter {
  constructor(
    private readonly ds: DataSource,
    private readonly chainKey: string | (() => Promise<string>),
    address: string,
    private readonly staleMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.address = address.toLowerCase();
  }

  private readonly address: string;
  private key: Promise<string> | undefined;

  private chain(): Promise<string> {
    const k = this.chainKey;
    if (typeof k === "string") return Promise.resolve(k);
    this.key ??= k().catch((err) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }

  /** A nonce nobody else is handed, at least `pending` (the chain's pending transaction count). */
  async allocate(pending: number): Promise<number> {
    const now = this.now();
    const chain = await this.chain();
    let next = await this.bump(pending, now, chain);
    if (next === undefined) {
      await execute(this.ds, `${sqlInsertIgnore(this.ds)} INTO chain_nonces (chain_key, address, next_nonce, updated_ms) VALUES (?, ?, ?, ?)`, [chain, this.address, pending, now]);
      next = await this.bump(pending, now, chain);
      if (next === undefined) throw new Error("could not allocate a nonce: no counter row");
    }
    return next - 1;
  }

  /** Moves the counter one on (from `pending` when it is behind the chain or stale); the new value, or undefined without a row. */
  private async bump(pending: number, now: number, chain: string): Promise<number | undefined> {
    const next = "CASE WHEN next_nonce < ? OR updated_ms < ? THEN ? ELSE next_nonce END + 1";
    const where = "WHERE chain_key = ? AND address = ?";
    // next_nonce before updated_ms: MySQL evaluates SET left to right, so the CASE reads the old updated_ms (as SQLite does).
    const params = [pending, now - this.staleMs, pending, now, chain, this.address];
    if (this.ds.options.type === "better-sqlite3") {
      const rows = (await this.ds.query(`UPDATE chain_nonces SET next_nonce = ${next}, updated_ms = ? ${where} RETURNING next_nonce`, params)) as { next_nonce: number | string }[];
      return rows.length ? Number(rows[0]!.next_nonce) : undefined;
    }
    const res = await statement(this.ds, `UPDATE chain_nonces SET next_nonce = LAST_INSERT_ID(${next}), updated_ms = ? ${where}`, params);
    return res.affected === 1 ? Number((res.raw as { insertId: number | string }).insertId) : undefined;
  }

  /** Never hands out a nonce below `pending` again (the chain used nonces this counter did not know of). */
  async raise(pending: number): Promise<void> {
    const chain = await this.chain();
    await execute(this.ds, `UPDATE chain_nonces SET next_nonce = ${sqlGreatest(this.ds)}(next_nonce, ?) WHERE chain_key = ? AND address = ?`, [pending, chain, this.address]);
  }
}

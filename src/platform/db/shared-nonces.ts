import type { DataSource } from "typeorm";
import { runInTransaction } from "./transaction.js";
import { execute, sqlGreatest, sqlInsertIgnore } from "./shared-sql.js";

// Nonces of one sending key on one chain (keyed by chain id and genesis hash, so a restarted dev chain
// starts a fresh counter), handed out through the database so that every process sending
// with the key (servers, workers) gets distinct ones: one row per (chain, address) holding the next nonce.
// An allocation is one transaction that first UPDATEs the row (MySQL/MariaDB: the row lock orders
// concurrent allocators; SQLite: the write lock, one writer across processes) and then reads it back.
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
    return runInTransaction(this.ds, async (m) => {
      const bump = () =>
        execute(
          this.ds,
          // next_nonce before updated_ms: MySQL evaluates SET left to right, so the CASE reads the old updated_ms (as SQLite does).
          "UPDATE chain_nonces SET next_nonce = CASE WHEN next_nonce < ? OR updated_ms < ? THEN ? ELSE next_nonce END + 1, updated_ms = ? WHERE chain_key = ? AND address = ?",
          [pending, now - this.staleMs, pending, now, chain, this.address],
          m,
        );
      if ((await bump()) !== 1) {
        await execute(this.ds, `${sqlInsertIgnore(this.ds)} INTO chain_nonces (chain_key, address, next_nonce, updated_ms) VALUES (?, ?, ?, ?)`, [chain, this.address, pending, now], m);
        if ((await bump()) !== 1) throw new Error("could not allocate a nonce: no counter row");
      }
      const rows = (await m.query("SELECT next_nonce FROM chain_nonces WHERE chain_key = ? AND address = ?", [chain, this.address])) as { next_nonce: string | number }[];
      return Number(rows[0]!.next_nonce) - 1;
    });
  }

  /** Never hands out a nonce below `pending` again (the chain used nonces this counter did not know of). */
  async raise(pending: number): Promise<void> {
    const chain = await this.chain();
    await execute(this.ds, `UPDATE chain_nonces SET next_nonce = ${sqlGreatest(this.ds)}(next_nonce, ?) WHERE chain_key = ? AND address = ?`, [pending, chain, this.address]);
  }
}

import type { EntityManager } from "typeorm";

/**
 * `SELECT … FOR UPDATE` on MySQL/MariaDB. SQLite has no row locks and needs none: its transactions
 * run one at a time (the single-writer path).
 */
export function forUpdate(manager: EntityManager): { lock?: { mode: "pessimistic_write" } } {
  return manager.connection.options.type === "better-sqlite3" ? {} : { lock: { mode: "pessimistic_write" } };
}

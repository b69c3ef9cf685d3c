import type { DataSource, EntityManager } from "typeorm";
import type { IsolationLevel } from "typeorm/driver/types/IsolationLevel.js";
import { errors } from "../rpc/errors.js";
import { withSqliteWriter } from "./sqlite-single-writer.js";

// SQLITE_BUSY_SNAPSHOT: another process (servers and workers sharing one SQLite file) wrote since this
// transaction read, so it cannot write: like a deadlock, the whole unit is retried.
const DEADLOCK = new Set(["ER_LOCK_DEADLOCK", "SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT"]);
const LOCK_WAIT = new Set(["ER_LOCK_WAIT_TIMEOUT"]);
const MAX_ATTEMPTS = 4;

function driverCode(err: unknown): string | undefined {
  const e = err as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}

/** A deadlock or lost snapshot: the whole transaction must be retried (runInTransaction does). */
export function isDeadlock(err: unknown): boolean {
  return DEADLOCK.has(driverCode(err) ?? "");
}

/**
 * Runs one unit of work in a transaction. A deadlock retries the whole unit with a fresh
 * QueryRunner (bounded); a lock-wait timeout becomes Unavailable so the client may retry.
 */
export async function runInTransaction<T>(ds: DataSource, work: (manager: EntityManager) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  if (ds.options.type === "better-sqlite3") return withSqliteWriter(() => transaction(ds, work));
  return transaction(ds, work, isolation);
}

async function transaction<T>(ds: DataSource, work: (manager: EntityManager) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const runner = ds.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction(isolation);
      const result = await work(runner.manager);
      await runner.commitTransaction();
      return result;
    } catch (err) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      const code = driverCode(err);
      if (code && DEADLOCK.has(code) && attempt < MAX_ATTEMPTS) {
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
        continue;
      }
      if (code && LOCK_WAIT.has(code)) throw errors.unavailable("database_busy", "the database is busy; retry", err);
      throw err;
    } finally {
      await runner.release();
    }
  }
}

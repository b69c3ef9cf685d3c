import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";

// TypeORM's better-sqlite3 driver runs every query on one shared connection through one shared
// QueryRunner, so a transaction is connection-wide: a query from another request issued while it is
// open would run inside it (and vanish on its rollback), and a second BEGIN fails. This single-writer
// path gives an open transaction to one async context (runInTransaction) and makes queries from every
// other context wait until it commits or rolls back. Each query on its own is atomic (better-sqlite3
// is synchronous). MySQL/MariaDB use a connection per runner and need none of this.

const context = new AsyncLocalStorage<symbol>();
let holder: symbol | undefined;
let waiters: (() => void)[] = [];

/** Whether a context holds the writer, and how many wait for it (the DB pool metrics). */
export function sqliteWriterWaiting(): { held: boolean; count: number } {
  return { held: holder !== undefined, count: waiters.length };
}

/** A promise to wait on when another context holds the writer; check and act in the same tick. */
function blocked(): Promise<void> | undefined {
  return holder !== undefined && holder !== context.getStore() ? new Promise<void>((resolve) => waiters.push(resolve)) : undefined;
}

/** Runs `fn` holding the SQLite writer: nothing else touches the connection until it settles. */
export async function withSqliteWriter<T>(fn: () => Promise<T>): Promise<T> {
  for (let wait = blocked(); wait; wait = blocked()) await wait;
  const token = Symbol("sqlite-writer");
  holder = token;
  try {
    return await context.run(token, fn);
  } finally {
    holder = undefined;
    const wake = waiters;
    waiters = [];
    for (const w of wake) w();
  }
}

let installed = false;

/** Makes every query and transaction start of the better-sqlite3 driver respect the writer. */
export function installSqliteSingleWriter(): void {
  if (installed) return;
  installed = true;
  const { BetterSqlite3QueryRunner } = createRequire(import.meta.url)("typeorm/driver/better-sqlite3/BetterSqlite3QueryRunner.js") as {
    BetterSqlite3QueryRunner: { prototype: Record<string, (...args: unknown[]) => Promise<unknown>> };
  };
  const proto = BetterSqlite3QueryRunner.prototype;
  for (const name of ["query", "startTransaction"]) {
    const original = proto[name]!;
    proto[name] = async function (this: unknown, ...args: unknown[]) {
      for (let wait = blocked(); wait; wait = blocked()) await wait;
      return original.apply(this, args);
    };
  }
}

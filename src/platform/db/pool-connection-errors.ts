import type { DataSource } from "typeorm";

// mysql2 gives each pool connection a one-shot 'error' listener (it drops the connection from the pool), and
// TypeORM adds its own handler only to a connection that has no listener at all, so it skips pool connections.
// A second error on one connection (a query's error, then its socket closing as the server dies) then had no
// listener, and an EventEmitter 'error' without a listener throws: the whole server crashed when MySQL was
// killed under load. Every pool connection gets a lasting listener; the error itself already reached the query
// that was waiting on it, and readiness reports the database.

interface EmitterLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

interface Mysql2Pool extends EmitterLike {
  _allConnections?: { toArray?(): EmitterLike[] };
}

const guarded = new WeakSet<object>();

function guard(connection: EmitterLike): void {
  if (guarded.has(connection)) return;
  guarded.add(connection);
  connection.on("error", () => undefined);
}

/** Gives every connection of a MySQL/MariaDB data source's pool, present and future, a lasting 'error' listener. */
export function guardPoolConnectionErrors(ds: DataSource): void {
  const pool = (ds.driver as unknown as { pool?: Mysql2Pool }).pool;
  if (!pool) return;
  pool.on("connection", (connection) => guard(connection as EmitterLike));
  // The connection TypeORM opened while initializing (to check the credentials) predates the listener above.
  for (const connection of pool._allConnections?.toArray?.() ?? []) guard(connection);
}

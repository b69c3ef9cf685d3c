/** True when a write failed on a unique index (MySQL/MariaDB or SQLite). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string; errno?: number } };
  const code = String(e?.driverError?.code ?? e?.code ?? ""); // ConnectErrors carry numeric codes
  if (e instanceof Error && e.name === "ConnectError") return false;
  return code === "ER_DUP_ENTRY" || code.startsWith("SQLITE_CONSTRAINT_UNIQUE") || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

// Driver codes of a database that cannot be reached or dropped the connection (MySQL/MariaDB via
// mysql2, SQLite via better-sqlite3): the request did not complete, nothing was decided.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR",
  "PROTOCOL_ENQUEUE_AFTER_QUIT",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "ER_CONNECTION_KILLED",
  "ER_QUERY_INTERRUPTED",
  "SQLITE_CANTOPEN",
  "SQLITE_IOERR",
  "SQLITE_FULL",
  "SQLITE_READONLY",
]);
const UNREACHABLE_MESSAGES = [/connection is in closed state/i, /pool is closed/i, /connection lost/i, /server has gone away/i, /server shutdown in progress/i, /driver not connected/i, /connection terminated/i];

/** True when an error means the database could not be reached (down, restarting, connection dropped), not that a query was wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error) || err.name === "ConnectError") return false;
  const e = err as Error & { code?: unknown; fatal?: unknown; driverError?: { code?: unknown; fatal?: unknown; message?: string } };
  const code = String(e.driverError?.code ?? e.code ?? "");
  if (UNREACHABLE_CODES.has(code)) return true;
  if (e.driverError?.fatal === true || e.fatal === true) return true;
  const message = `${e.message} ${e.driverError?.message ?? ""}`;
  return UNREACHABLE_MESSAGES.some((re) => re.test(message));
}

/** True when a write waited too long for a lock (the database is up but busy). */
export function isDatabaseBusy(err: unknown): boolean {
  if (!(err instanceof Error) || err.name === "ConnectError") return false;
  const e = err as Error & { code?: unknown; driverError?: { code?: unknown } };
  const code = String(e.driverError?.code ?? e.code ?? "");
  return code === "ER_LOCK_WAIT_TIMEOUT" || code === "SQLITE_BUSY";
}

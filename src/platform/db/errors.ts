/** True when a write failed on a unique index (MySQL/MariaDB or SQLite). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string; errno?: number } };
  const code = String(e?.driverError?.code ?? e?.code ?? ""); // ConnectErrors carry numeric codes
  if (e instanceof Error && e.name === "ConnectError") return false;
  return code === "ER_DUP_ENTRY" || code.startsWith("SQLITE_CONSTRAINT_UNIQUE") || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryResult } from "typeorm";

// Small raw-SQL helpers for state shared by every process (counters, breakers, nonces): one statement
// each, atomic on its own on SQLite and MySQL/MariaDB alike.

const isSqlite = (ds: DataSource) => ds.options.type === "better-sqlite3";

/** The two-argument maximum / minimum: MAX()/MIN() on SQLite, GREATEST()/LEAST() on MySQL. */
export const sqlGreatest = (ds: DataSource) => (isSqlite(ds) ? "MAX" : "GREATEST");
export const sqlLeast = (ds: DataSource) => (isSqlite(ds) ? "MIN" : "LEAST");

/** `INSERT IGNORE` on MySQL, `INSERT OR IGNORE` on SQLite. */
export const sqlInsertIgnore = (ds: DataSource) => (isSqlite(ds) ? "INSERT OR IGNORE" : "INSERT IGNORE");

/** Runs one statement (`?` placeholders) and returns the rows it changed. */
export async function execute(ds: DataSource, sql: string, params: unknown[], manager?: EntityManager): Promise<number> {
  return (await statement(ds, sql, params, manager)).affected ?? 0;
}

/** Runs one statement (`?` placeholders) on `manager`'s connection, or a pooled one, and returns the driver's result. */
export async function statement(ds: DataSource, sql: string, params: unknown[], manager?: EntityManager): Promise<QueryResult> {
  const runner = manager?.queryRunner ?? ds.createQueryRunner();
  try {
    return await runner.query(sql, params, true);
  } finally {
    if (!manager?.queryRunner) await runner.release();
  }
}

/** True when `sql` (a `SELECT 1 ... LIMIT 1`) finds a row: a poller's lock-free look before its claiming transaction. */
export async function anyRow(ds: DataSource, sql: string, params: unknown[]): Promise<boolean> {
  return ((await statement(ds, sql, params)).records?.length ?? 0) > 0;
}

/** `value` as the column of `entity.property` stores it (a Date as the dialect's datetime), for a raw statement. */
export function columnValue<T extends ObjectLiteral>(ds: DataSource, entity: EntityTarget<T>, property: keyof T & string, value: unknown): unknown {
  return ds.driver.preparePersistentValue(value, ds.getMetadata(entity).findColumnWithPropertyName(property)!);
}

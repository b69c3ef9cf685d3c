import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from "typeorm";

// INSERT of entity rows as one parameterized statement, without TypeORM's insert query builder: on the
// paid path the builder costs several times the statement's own CPU. Column names and value conversion
// (dates, money transformers) still come from the entity's metadata and the driver, so both dialects
// store exactly what `manager.insert` would. No reload of defaults: callers pass every value they read.

export interface RawInsertResult {
  affected: number;
  /** The auto-increment id of a single inserted row (MySQL insertId, SQLite lastInsertRowid). */
  insertId: number | undefined;
}

/** Inserts `rows` (properties left undefined in every row are omitted: defaults/auto-increment apply). */
export async function insertRows<T extends ObjectLiteral>(ds: DataSource, target: EntityTarget<T>, rows: Partial<T>[], manager?: EntityManager): Promise<RawInsertResult> {
  if (rows.length === 0) return { affected: 0, insertId: undefined };
  const meta = ds.getMetadata(target);
  const cols = meta.columns.filter((c) => rows.some((r) => r[c.propertyName] !== undefined));
  const params: unknown[] = [];
  for (const r of rows) for (const c of cols) params.push(ds.driver.preparePersistentValue(r[c.propertyName] ?? null, c));
  const tuple = `(${cols.map(() => "?").join(", ")})`;
  const q = (name: string) => ds.driver.escape(name);
  const sql = `INSERT INTO ${q(meta.tableName)} (${cols.map((c) => q(c.databaseName)).join(", ")}) VALUES ${rows.map(() => tuple).join(", ")}`;
  const runner = manager?.queryRunner ?? ds.createQueryRunner();
  try {
    const res = await runner.query(sql, params, true);
    const raw = res.raw as { insertId?: number } | number | bigint | undefined;
    const insertId = typeof raw === "object" && raw !== null ? raw.insertId : raw === undefined ? undefined : Number(raw);
    return { affected: res.affected ?? rows.length, insertId };
  } finally {
    if (!manager?.queryRunner) await runner.release();
  }
}

import fs from "node:fs";
import path from "node:path";
import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from "typeorm";
import type { DatabaseConfig } from "../../config.js";
import { ENTITIES } from "./entities.js";
import { MIGRATIONS } from "./migrations/index.js";
import { installSqliteSingleWriter } from "./sqlite-single-writer.js";
import { guardPoolConnectionErrors } from "./pool-connection-errors.js";

// One DataSource per process. Schema changes only through migrations (`synchronize: false`
// everywhere, tests included); both dialects run the same migration classes.

export type EntityList = MixedList<Function | string | EntitySchema>;

export function dataSourceOptions(db: DatabaseConfig, entities: EntityList = ENTITIES): DataSourceOptions {
  const common = { entities, migrations: MIGRATIONS, synchronize: false, migrationsRun: false, logging: false } as const;
  if (db.kind === "sqlite") {
    return {
      ...common,
      type: "better-sqlite3",
      database: db.file,
      enableWAL: true,
      timeout: 10_000,
      prepareDatabase: (conn: { pragma(s: string): unknown }) => {
        conn.pragma("foreign_keys = ON");
        conn.pragma("synchronous = NORMAL");
      },
    };
  }
  return {
    ...common,
    type: db.kind,
    url: db.url,
    charset: "utf8mb4_unicode_ci",
    timezone: "Z",
    supportBigNumbers: true,
    bigNumberStrings: true,
    poolSize: db.poolSize,
    connectTimeout: 10_000,
    // mysql2's `trace` captures a stack trace on every query (3% of a paid call's CPU under load); its
    // errors keep their codes and messages without it.
    extra: { trace: false },
  };
}

/** Opens the database (creating the SQLite directory when needed). */
export async function openDataSource(db: DatabaseConfig, entities?: EntityList): Promise<DataSource> {
  if (db.kind === "sqlite") {
    fs.mkdirSync(path.dirname(db.file), { recursive: true });
    installSqliteSingleWriter();
  }
  const ds = new DataSource(dataSourceOptions(db, entities));
  await ds.initialize();
  if (db.kind !== "sqlite") guardPoolConnectionErrors(ds);
  return ds;
}

/** Runs pending migrations, each in its own transaction; returns the names applied. */
export async function runMigrations(ds: DataSource): Promise<string[]> {
  const applied = await ds.runMigrations({ transaction: "each" });
  return applied.map((m) => m.name);
}

/**
 * The SQL TypeORM would run to make the database match the entities. Empty means no drift
 * between the migrations and the entity definitions.
 */
export async function schemaDrift(ds: DataSource): Promise<string[]> {
  const log = await ds.driver.createSchemaBuilder().log();
  return log.upQueries.map((q) => q.query);
}

/** Round-trips the database; used by readiness. */
export async function pingDatabase(ds: DataSource): Promise<void> {
  await ds.query("SELECT 1");
}

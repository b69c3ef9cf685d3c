import type { DataSource } from "typeorm";
import { sqliteWriterWaiting } from "../db/sqlite-single-writer.js";

// Connection pool numbers for the metrics. MySQL/MariaDB: the mysql2 pool behind TypeORM's driver (its
// internal queues: mysql2 exposes no public counters). SQLite: one connection, idle unless a context
// holds the single writer; waiting counts the contexts queued behind it.

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  limit: number;
}

interface Mysql2Pool {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
  config?: { connectionLimit?: number };
}

export function dbPoolStats(ds: DataSource): PoolStats | undefined {
  if (ds.options.type === "better-sqlite3") {
    const waiting = sqliteWriterWaiting();
    return { total: 1, idle: waiting.held ? 0 : 1, waiting: waiting.count, limit: 1 };
  }
  const pool = (ds.driver as unknown as { pool?: Mysql2Pool }).pool;
  if (!pool?._allConnections) return undefined;
  return {
    total: pool._allConnections.length,
    idle: pool._freeConnections?.length ?? 0,
    waiting: pool._connectionQueue?.length ?? 0,
    limit: pool.config?.connectionLimit ?? 0,
  };
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { openDataSource, runMigrations } from "../src/platform/db/data-source.js";
import { testDatabaseConfig } from "./fixtures/test-database.js";

// One database per test run: a fresh MySQL/MariaDB schema `test_<run>` when DATABASE_URL points at a
// server, otherwise a fresh SQLite file. Migrations (never synchronize) create the schema.

const runId = randomBytes(4).toString("hex");
let dropUrl: URL | undefined;
let sqliteDir: string | undefined;

export async function mochaGlobalSetup(): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (base) {
    const url = new URL(base);
    const name = `test_${runId}`;
    const admin = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username || "root"),
      password: decodeURIComponent(url.password),
    });
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.end();
    url.pathname = `/${name}`;
    process.env.SVC_TEST_DATABASE_URL = url.toString();
    dropUrl = url;
  } else {
    sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-test-${runId}-`));
    process.env.SVC_TEST_SQLITE_FILE = path.join(sqliteDir, "svc.sqlite");
  }
  const ds = await openDataSource(testDatabaseConfig());
  await runMigrations(ds);
  await ds.destroy();
  console.log(`test database: ${dropUrl ? dropUrl.pathname.slice(1) + " on " + dropUrl.host : process.env.SVC_TEST_SQLITE_FILE}`);
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (process.env.KEEP_TEST_DB === "1") return;
  if (dropUrl) {
    const admin = await mysql.createConnection({
      host: dropUrl.hostname,
      port: Number(dropUrl.port || 3306),
      user: decodeURIComponent(dropUrl.username || "root"),
      password: decodeURIComponent(dropUrl.password),
    });
    await admin.query(`DROP DATABASE IF EXISTS \`${dropUrl.pathname.slice(1)}\``);
    await admin.end();
  }
  if (sqliteDir) fs.rmSync(sqliteDir, { recursive: true, force: true });
}

import { expect } from "chai";
import mysql from "mysql2/promise";
import Database from "better-sqlite3";
import { Code, ConnectError } from "@connectrpc/connect";
import { isDatabaseBusy, isDatabaseUnavailable, isUniqueViolation } from "../../../src/platform/db/errors.js";
import { databaseError, errorReason, errors } from "../../../src/platform/rpc/errors.js";
import { freePort } from "../../fixtures/private-mariadb.js";

// Real driver errors: a database that cannot be reached is 503 `database_unavailable`; a query the
// database refused (bad SQL, a unique key) is not an outage and keeps its own handling.

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
}

describe("database error classification", () => {
  it("a refused MySQL connection is an outage, mapped to 503 database_unavailable", async () => {
    const err = await caught(mysql.createConnection({ host: "127.0.0.1", port: await freePort(), user: "root", connectTimeout: 2_000 }));
    expect(isDatabaseUnavailable(err)).to.equal(true);
    const mapped = databaseError(err)!;
    expect(mapped.code).to.equal(Code.Unavailable);
    expect(errorReason(mapped)).to.equal("database_unavailable");
  });

  it("a SQLite file that cannot be opened is an outage", () => {
    let err: unknown;
    try {
      new Database("/tmp").prepare("SELECT 1").get(); // a directory, not a database file
    } catch (e) {
      err = e;
    }
    expect(isDatabaseUnavailable(err)).to.equal(true);
  });

  it("bad SQL, unique violations and our own errors are not outages", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY)");
    db.prepare("INSERT INTO t VALUES ('a')").run();
    let dup: unknown;
    let syntax: unknown;
    try {
      db.prepare("INSERT INTO t VALUES ('a')").run();
    } catch (e) {
      dup = e;
    }
    try {
      db.prepare("SELEC 1").run();
    } catch (e) {
      syntax = e;
    }
    db.close();
    expect(isUniqueViolation(dup)).to.equal(true);
    for (const err of [dup, syntax, errors.unavailable("x", "y"), new Error("boom"), "text"]) {
      expect(isDatabaseUnavailable(err), String(err)).to.equal(false);
      expect(databaseError(err)).to.equal(undefined);
    }
    expect(isDatabaseUnavailable(new ConnectError("closed state"))).to.equal(false);
  });

  it("a lock-wait timeout is busy: 503 database_busy", () => {
    const err = Object.assign(new Error("Lock wait timeout exceeded"), { driverError: { code: "ER_LOCK_WAIT_TIMEOUT" } });
    expect(isDatabaseBusy(err)).to.equal(true);
    expect(errorReason(databaseError(err)!)).to.equal("database_busy");
  });
});

import { expect } from "chai";
import type { DataSource } from "typeorm";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { execute } from "../../../src/platform/db/shared-sql.js";
import { SharedPayerRateLimiter } from "../../../src/policy/shared-rate-limit.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// The shared rate limit's one-statement first call (an insert of the admitted row) and its fallbacks:
// a payer known to this server whose row was swept, and a payer new here whose row another server made.

const unique = () => `0x${Math.random().toString(16).slice(2).padEnd(40, "0").slice(0, 40)}`;

describe("shared payer rate limit: first calls", function () {
  let ds: DataSource;
  before(async () => {
    ds = await openDataSource(testDatabaseConfig());
  });
  after(async () => {
    await ds?.destroy();
  });

  it("a first call admits and leaves the row a full bucket's admission leaves; the burst still holds", async () => {
    const now = 1_700_000_000_000;
    const limiter = new SharedPayerRateLimiter(ds, { perMinute: 60, burst: 3 }, () => now);
    const payer = unique();
    expect(await limiter.take(payer)).to.equal(0);
    const [row] = await ds.query("SELECT tat_us FROM payer_rate_limits WHERE payer = ?", [payer]);
    expect(Number(row.tat_us)).to.equal(now * 1000 + 1_000_000);
    expect(await limiter.take(payer)).to.equal(0);
    expect(await limiter.take(payer)).to.equal(0);
    expect(await limiter.take(payer)).to.equal(1_000);
  });

  it("a known payer whose row was swept is admitted again (the insert after the update found no row)", async () => {
    let now = 1_700_000_000_000;
    const limiter = new SharedPayerRateLimiter(ds, { perMinute: 60, burst: 1 }, () => now);
    const payer = unique();
    expect(await limiter.take(payer)).to.equal(0);
    expect(await limiter.take(payer)).to.equal(1_000);
    await execute(ds, "DELETE FROM payer_rate_limits WHERE payer = ?", [payer]);
    now += 10;
    expect(await limiter.take(payer)).to.equal(0);
    expect(await limiter.take(payer)).to.be.greaterThan(0);
  });

  it("a payer new to this server but limited by another is refused with the wait (the insert is ignored)", async () => {
    const now = 1_700_000_000_000;
    const other = new SharedPayerRateLimiter(ds, { perMinute: 60, burst: 1 }, () => now);
    const here = new SharedPayerRateLimiter(ds, { perMinute: 60, burst: 1 }, () => now);
    const payer = unique();
    expect(await other.take(payer)).to.equal(0);
    expect(await here.take(payer)).to.equal(1_000);
  });
});

import { expect } from "chai";
import type { DataSource } from "typeorm";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { SharedNonceCounter } from "../../../src/platform/db/shared-nonces.js";
import { CircuitOpenError } from "../../../src/policy/circuit-breakers.js";
import { SharedCircuitBreakers } from "../../../src/policy/shared-circuit-breakers.js";
import { SharedPayerRateLimiter } from "../../../src/policy/shared-rate-limit.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// State shared through the database by every process: two DataSources (two connection pools, as two
// processes have) act on one database; clocks injected where the test needs to move time.

const unique = () => `0x${Math.random().toString(16).slice(2).padEnd(40, "0").slice(0, 40)}`;

describe("cluster state in the database: payer rate limit, circuit breakers, nonces", function () {
  let a: DataSource;
  let b: DataSource;

  before(async () => {
    a = await openDataSource(testDatabaseConfig());
    b = await openDataSource(testDatabaseConfig());
  });
  after(async () => {
    await a?.destroy();
    await b?.destroy();
  });

  it("rate limit: one GCRA budget per payer across both pools, case-insensitive, with the exact wait", async () => {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const la = new SharedPayerRateLimiter(a, { perMinute: 60, burst: 2 }, clock);
    const lb = new SharedPayerRateLimiter(b, { perMinute: 60, burst: 2 }, clock);
    const payer = unique();
    expect(await la.take(payer)).to.equal(0);
    expect(await lb.take(payer.toUpperCase().replace("0X", "0x"))).to.equal(0);
    expect(await la.take(payer)).to.equal(1_000);
    expect(await lb.take(unique())).to.equal(0);
    now += 1_000;
    expect(await lb.take(payer)).to.equal(0);
    expect(await la.take(payer)).to.be.greaterThan(0);
    expect(await new SharedPayerRateLimiter(a, { perMinute: 0, burst: 1 }).take(payer)).to.equal(0);
  });

  it("rate limit: of 40 concurrent first calls of one payer on two pools exactly `burst` pass", async () => {
    const payer = unique();
    const limiters = [new SharedPayerRateLimiter(a, { perMinute: 1, burst: 7 }), new SharedPayerRateLimiter(b, { perMinute: 1, burst: 7 })];
    const waits = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2]!.take(payer)));
    expect(waits.filter((w) => w === 0)).to.have.length(7);
    for (const w of waits.filter((w) => w > 0)) expect(w).to.be.within(1, 61_000);
  });

  it("rate limit: concurrent calls under the burst all pass (clocks read in one order, rows written in another)", async () => {
    const limiters = [new SharedPayerRateLimiter(a, { perMinute: 1, burst: 5 }), new SharedPayerRateLimiter(b, { perMinute: 1, burst: 5 })];
    for (let round = 0; round < 5; round++) {
      const payers = Array.from({ length: 10 }, () => unique());
      const waits = await Promise.all(payers.flatMap((p) => [0, 1, 0, 1, 0].map((i) => limiters[i]!.take(p))));
      expect(waits.filter((w) => w !== 0)).to.deep.equal([]);
      expect(await Promise.all(payers.map((p, i) => limiters[i % 2]!.take(p)))).to.satisfy((w: number[]) => w.every((x) => x > 0));
    }
  });

  it("breakers: failures on either pool open one breaker; the half-open trial is admitted once across both", async () => {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const opts = { threshold: 3, cooldownMs: 1_000, trialLeaseMs: 5_000 };
    const ba = new SharedCircuitBreakers(a, opts, clock);
    const bb = new SharedCircuitBreakers(b, opts, clock);
    const up = `https://up-${Math.random().toString(36).slice(2)}.example/path?q=1`;
    await ba.failure(up);
    await bb.failure(up);
    await ba.success(up); // resets the shared count
    await ba.failure(up);
    await bb.failure(up);
    expect(await ba.state(up)).to.equal("closed");
    await ba.failure(up);
    expect(await bb.state(new URL(up).origin)).to.equal("open");
    await expectOpen(bb.admit(up));
    expect(await bb.retryAfterMs(up)).to.equal(1_000);

    now += 1_000;
    expect(await ba.state(up)).to.equal("half_open");
    // Twenty concurrent admissions on two pools: exactly one trial.
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? ba : bb).admit(up)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).to.have.length(1);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).to.be.instanceOf(CircuitOpenError);
    const holder = outcomes.findIndex((o) => o.status === "fulfilled") % 2 ? ba : bb;
    const other = holder === ba ? bb : ba;
    await holder.failure(up); // the trial failed: open again
    expect(await other.state(up)).to.equal("open");

    now += 1_000;
    await other.admit(up); // a new trial, on the other pool
    await expectOpen(holder.admit(up));
    // The trial's process dies without reporting: its lease ends and another trial is admitted.
    now += 5_000;
    await holder.admit(up);
    await holder.success(up);
    expect(await other.state(up)).to.equal("closed");
    await other.admit(up);
  });

  it("nonces: 60 concurrent allocations of one key on two pools are distinct and contiguous; never below the chain", async () => {
    const address = unique();
    const na = new SharedNonceCounter(a, "84532:0xgenesis", address, 60_000);
    const nb = new SharedNonceCounter(b, "84532:0xgenesis", address, 60_000);
    const got = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? na : nb).allocate(5)));
    expect([...got].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 60 }, (_, i) => 5 + i));
    // The chain moved past the counter (the key was used elsewhere): the counter follows it.
    expect(await na.allocate(100)).to.equal(100);
    await nb.raise(200);
    expect(await na.allocate(150)).to.equal(200);
    // Another chain id or key has its own counter.
    expect(await new SharedNonceCounter(a, "8453:0xgenesis", address, 60_000).allocate(0)).to.equal(0);
  });

  it("nonces: a counter left ahead of the chain (allocations never sent) and idle for staleMs restarts at the chain's count", async () => {
    let now = 1_700_000_000_000;
    const address = unique();
    const n = new SharedNonceCounter(a, "84532:0xgenesis", address, 10_000, () => now);
    expect(await n.allocate(0)).to.equal(0);
    expect(await n.allocate(0)).to.equal(1);
    expect(await n.allocate(0)).to.equal(2); // the chain saw none of them (a process died)
    now += 5_000;
    expect(await n.allocate(0)).to.equal(3); // not idle long enough: a live sender may still send 0..2
    now += 10_001;
    expect(await n.allocate(0)).to.equal(0);
    expect(await n.allocate(0)).to.equal(1);
  });
});

async function expectOpen(p: Promise<void>): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(CircuitOpenError);
    return;
  }
  expect.fail("expected the breaker to refuse");
}

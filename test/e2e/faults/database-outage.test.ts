import { expect } from "chai";
import type { Address } from "viem";
import { privateMariaDbMissing, startPrivateMariaDb, type PrivateMariaDb } from "../../fixtures/private-mariadb.js";
import { challenge, joinChainEnv, newRigBuyer, paidCall, signPayment, spawnSvc, startRigChain, svcLedgerCheck, type PaidResult, type RigBuyer, type RigChain, type SignedPayment, type SvcProcess } from "../../fixtures/fault-rig.js";
import { IN_FLIGHT_STATES, paymentRows } from "../../fixtures/payment-audit.js";

// The database goes away under a running `svc serve` (a private MariaDB this test owns: the shared
// server is never touched). Readiness fails, paid calls are refused with 503 `database_unavailable`
// before anything is charged, and after the restart nothing is half-written: each payer paid exactly
// for the payments recorded settled, and `svc ledger check` passes. Runs in both CI runs (it brings
// its own database); skipped only where mariadbd is not installed.

const SKU = "agent.trust-badge";
/** Reasons a paid call may be refused with while the database restarts: each says whether money moved. */
const OUTAGE_REASONS = ["database_unavailable", "database_busy", "settlement_unrecorded", "settlement_unknown", "payment_in_progress", "facilitator_unavailable"];

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The first lost call's error. */
function res0Lost(results: { res: PaidResult }[]): string {
  return results.find((r) => r.res.status === 0)?.res.lost ?? "";
}

describe("database outage: a private MariaDB stopped and restarted under a running server", function () {
  this.timeout(240_000);
  let db: PrivateMariaDb | undefined;
  let chain: RigChain | undefined;
  let svc: SvcProcess | undefined;
  let env: Record<string, string> = {};

  before(async function () {
    const missing = privateMariaDbMissing();
    if (missing) {
      console.log(`    database outage tests skipped: ${missing}`);
      this.skip();
    }
    [db, chain] = await Promise.all([startPrivateMariaDb(), startRigChain()]);
    env = { DATABASE_URL: db.url, ...joinChainEnv(chain.rpcUrl, chain.facilitatorKey), SETTLE_TIMEOUT_MS: "2000", WORKER_CONCURRENCY: "0" };
    svc = await spawnSvc(env);
  });
  after(async () => {
    await svc?.kill("SIGKILL");
    await chain?.stop();
    await db?.destroy();
  });

  const ready = async () => (await fetch(`${svc!.url}/v1/health/ready`)).status;

  /** After the outage: nothing in flight, every payer charged exactly its settled payments, the books balance. */
  async function expectExactCharges(buyers: RigBuyer[], before: Map<Address, bigint>, results: { pay: SignedPayment; res: PaidResult }[]) {
    await until("no payment in flight", async () => (await paymentRows(env, buyers.map((b) => b.address))).every((r) => !IN_FLIGHT_STATES.includes(r.state)), 90_000);
    const rows = await paymentRows(env, buyers.map((b) => b.address));
    for (const b of buyers) {
      const settled = rows.filter((r) => r.payer.toLowerCase() === b.address.toLowerCase() && r.state === "settled").reduce((s, r) => s + r.amount, 0n);
      expect(before.get(b.address)! - (await chain!.balance(b.address)), `payer ${b.address}`).to.equal(settled);
    }
    for (const { pay, res } of results) {
      const row = rows.find((r) => r.nonce.toLowerCase() === pay.nonce.toLowerCase());
      if (res.status === 200) {
        expect(row?.state, "a delivered call is settled").to.equal("settled");
        expect(row?.txHash).to.equal(res.body!.payment_proof.tx_hash);
      }
      // A lost answer whose payment settled is delivered by replaying the same payment.
      if (res.status !== 200 && row?.state === "settled") {
        const replay = await paidCall(svc!.url, SKU, { subject: pay.payer }, pay.header);
        expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
        expect(replay.body!.payment_proof.tx_hash).to.equal(row.txHash);
      }
      if (res.status === 200 || row?.state !== "settled") {
        const used = await chain!.authorizationUsed(pay.payer, pay.nonce);
        expect(used, `authorization of ${pay.nonce} used only if settled`).to.equal(row?.state === "settled");
      }
    }
    const books = await svcLedgerCheck(env);
    expect(books.code, books.out).to.equal(0);
  }

  it("database down: readiness 503, a valid paid call refused with 503 database_unavailable and not charged; after the restart the same payment is served once", async () => {
    const buyer = newRigBuyer();
    await chain!.fund(buyer.address, 1_000_000n);
    const body = { subject: buyer.address };
    const accepted = (await challenge(svc!.url, SKU, body)).accepts[0];
    const pay = await signPayment(buyer, accepted);
    const before = await chain!.balance(buyer.address);
    expect(await ready()).to.equal(200);

    await db!.stop();
    expect(await ready()).to.equal(503);
    const health = (await (await fetch(`${svc!.url}/v1/health/ready`)).json()) as Record<string, any>;
    expect(JSON.stringify(health)).to.contain("database");
    const refused = await paidCall(svc!.url, SKU, body, pay.header);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
    expect(refused.code).to.equal("database_unavailable");
    expect(await chain!.balance(buyer.address)).to.equal(before);
    expect(await chain!.authorizationUsed(buyer.address, pay.nonce)).to.equal(false);

    await db!.start();
    await until("readiness after the database restart", async () => (await ready()) === 200, 30_000);
    const served = await paidCall(svc!.url, SKU, body, pay.header);
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(await chain!.balance(buyer.address)).to.equal(before - BigInt(accepted.amount));
    await expectExactCharges([buyer], new Map([[buyer.address, before]]), [{ pay, res: served }]);
  });

  it("database restarted during 60 concurrent paid calls: no unexplained 500, no charge without a settled record, service recovers", async () => {
    const buyers = Array.from({ length: 60 }, () => newRigBuyer());
    for (const b of buyers) await chain!.fund(b.address, 1_000_000n);
    const before = new Map<Address, bigint>();
    for (const b of buyers) before.set(b.address, await chain!.balance(b.address));
    const accepted = (await challenge(svc!.url, SKU, { subject: buyers[0]!.address })).accepts[0];
    const pays = await Promise.all(buyers.map((b) => signPayment(b, accepted, 30)));

    const calls = pays.map(async (pay) => ({ pay, res: await paidCall(svc!.url, SKU, { subject: pay.payer }, pay.header) }));
    await Promise.race(calls); // the first answer is back: the rest are in flight
    await db!.stop(true); // crash...
    await db!.start(); // ...and restart
    const results = await Promise.all(calls);
    const outcomes = new Map<string, number>();
    for (const { res } of results) outcomes.set(res.code ?? String(res.status), (outcomes.get(res.code ?? String(res.status)) ?? 0) + 1);
    console.log(`      outcomes during the restart: ${JSON.stringify(Object.fromEntries(outcomes))}`);

    // A lost answer means the server process went away: say how, with the end of its log.
    const died = () => `${res0Lost(results)}; server exit code ${svc!.child.exitCode}, signal ${svc!.child.signalCode}; its last output:\n${svc!.output().slice(-6_000)}`;
    for (const { res } of results) {
      expect(res.status, JSON.stringify(res.body)).to.not.equal(500);
      if (res.status === 0) expect.fail(died());
      if (res.status !== 200) expect(OUTAGE_REASONS, JSON.stringify(res.body)).to.include(res.code);
    }
    await until("readiness after the restart", async () => (await ready()) === 200, 30_000);
    await expectExactCharges(buyers, before, results);

    // Service is back: a fresh payment is served.
    const b = newRigBuyer();
    await chain!.fund(b.address, 1_000_000n);
    const fresh = await paidCall(svc!.url, SKU, { subject: b.address }, (await signPayment(b, accepted)).header);
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
  });
});

import { expect } from "chai";
import type { Address } from "viem";
import { challenge, joinChainEnv, newRigBuyer, paidCall, signPayment, spawnSvc, startRigChain, svcLedgerCheck, type PaidResult, type RigBuyer, type RigChain, type SignedPayment, type SvcProcess } from "../../fixtures/fault-rig.js";
import { IN_FLIGHT_STATES, paymentRows } from "../../fixtures/payment-audit.js";
import { testDatabaseEnv } from "../../fixtures/test-database.js";

// kill -9 of a `svc serve` in the middle of 200 concurrent paid calls (50 payers, 4 calls each), on
// this run's database and a chain that outlives the server. After a restart on the same database and
// chain and reconciliation: no payment is left in flight, every payer's on-chain spend equals the sum
// of its payments recorded settled (each of which a replay of the same payment delivers), every
// authorization not settled is unused on-chain, and `svc ledger check` passes.

const SKU = "agent.trust-badge";
const PAYERS = 50;
const CALLS_EACH = 4;
/** Authorizations expire soon, so payments the kill left unsent are provably dead within the test. */
const VALID_FOR_S = 15;

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("kill -9 of a server during 200 concurrent paid calls", function () {
  this.timeout(240_000);
  let chain: RigChain;
  let svc: SvcProcess | undefined;
  let env: Record<string, string>;

  before(async () => {
    chain = await startRigChain();
    env = { ...testDatabaseEnv(), ...joinChainEnv(chain.rpcUrl, chain.facilitatorKey), SETTLE_TIMEOUT_MS: "2000", WORKER_CONCURRENCY: "0", PAYER_RATE_LIMIT_PER_MINUTE: "100000" };
  });
  after(async () => {
    await svc?.kill("SIGKILL");
    await chain?.stop();
  });

  it("after a restart every payer was charged exactly for what was delivered, and the books balance", async () => {
    svc = await spawnSvc(env);
    const buyers: RigBuyer[] = Array.from({ length: PAYERS }, () => newRigBuyer());
    for (const b of buyers) await chain.fund(b.address, 1_000_000n);
    const before = new Map<Address, bigint>();
    for (const b of buyers) before.set(b.address, await chain.balance(b.address));
    const accepted = (await challenge(svc.url, SKU, { subject: buyers[0]!.address })).accepts[0];
    const pays: SignedPayment[] = [];
    for (let i = 0; i < CALLS_EACH; i++) for (const b of buyers) pays.push(await signPayment(b, accepted, VALID_FOR_S));

    let answered = 0;
    let delivered = 0;
    const calls = pays.map(async (pay) => {
      const res = await paidCall(svc!.url, SKU, { subject: pay.payer }, pay.header);
      answered++;
      if (res.status === 200) delivered++;
      return { pay, res };
    });
    await until("some calls delivered", async () => delivered >= 20, 60_000); // the kill lands mid-load
    const killedAfter = answered;
    expect(await svc.kill("SIGKILL")).to.equal(null); // killed by the signal, no clean exit
    const results: { pay: SignedPayment; res: PaidResult }[] = await Promise.all(calls);
    const lost = results.filter((r) => r.res.status === 0).length;
    console.log(`      killed after ${killedAfter} answers; ${results.filter((r) => r.res.status === 200).length} delivered before the kill, ${lost} calls lost with the server`);
    const refusals = results.filter((r) => r.res.status !== 200 && r.res.status !== 0).map((r) => r.res.code);
    if (refusals.length) console.log(`      refused before the kill: ${JSON.stringify(refusals.reduce<Record<string, number>>((m, c) => ({ ...m, [String(c)]: (m[String(c)] ?? 0) + 1 }), {}))}`);
    for (const { res } of results) {
      expect(res.status, JSON.stringify(res.body)).to.not.equal(500);
      if (res.status !== 200 && res.status !== 0) expect(res.code, JSON.stringify(res.body)).to.be.a("string");
    }

    // Restart on the same database and chain; reconciliation (at start, then in the background) resolves the rest.
    svc = await spawnSvc(env);
    await until("no payment in flight", async () => (await paymentRows(env, buyers.map((b) => b.address))).every((r) => !IN_FLIGHT_STATES.includes(r.state)), (VALID_FOR_S + 60) * 1000);
    const rows = await paymentRows(env, buyers.map((b) => b.address));
    expect(rows.length).to.be.at.most(pays.length);

    for (const b of buyers) {
      const mine = rows.filter((r) => r.payer.toLowerCase() === b.address.toLowerCase());
      const settled = mine.filter((r) => r.state === "settled").reduce((s, r) => s + r.amount, 0n);
      const refunded = mine.filter((r) => r.state === "refunded").reduce((s, r) => s + r.amount, 0n);
      // A refund returns the money on-chain too: spent = settled (refunded sales excluded).
      expect(before.get(b.address)! - (await chain.balance(b.address)), `payer ${b.address}`).to.equal(settled);
      expect(refunded).to.equal(0n); // a sync SKU is never refunded
    }
    let replayed = 0;
    for (const { pay, res } of results) {
      const row = rows.find((r) => r.nonce.toLowerCase() === pay.nonce.toLowerCase());
      const settled = row?.state === "settled";
      expect(await chain.authorizationUsed(pay.payer, pay.nonce), `authorization ${pay.nonce} used iff settled`).to.equal(settled);
      if (res.status === 200) {
        expect(settled, "a delivered call is recorded settled").to.equal(true);
        expect(res.body!.payment_proof.tx_hash).to.equal(row!.txHash);
      } else if (settled) {
        // Paid, but the answer was lost with the server: the same payment delivers the stored result, free.
        const replay = await paidCall(svc.url, SKU, { subject: pay.payer }, pay.header);
        expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
        expect(replay.body!.payment_proof.tx_hash).to.equal(row!.txHash);
        replayed++;
      }
    }
    console.log(`      ${rows.filter((r) => r.state === "settled").length} settled, ${rows.filter((r) => r.state === "failed").length} failed (never charged), ${replayed} delivered by replay after the restart`);
    for (const b of buyers) {
      const settled = rows.filter((r) => r.payer.toLowerCase() === b.address.toLowerCase() && r.state === "settled").reduce((s, r) => s + r.amount, 0n);
      expect(before.get(b.address)! - (await chain.balance(b.address)), "replays charge nothing more").to.equal(settled);
    }
    const books = await svcLedgerCheck(env);
    expect(books.code, books.out).to.equal(0);
  });
});

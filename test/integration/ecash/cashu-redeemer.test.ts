import { expect } from "chai";
import { Writable } from "node:stream";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { ConnectError } from "@connectrpc/connect";
import { CheckStateEnum, getDecodedToken, getEncodedToken, isMintOperationError, type Proof } from "@cashu/cashu-ts";
import type { DataSource } from "typeorm";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { runInTransaction } from "../../../src/platform/db/transaction.js";
import { errorReason } from "../../../src/platform/rpc/errors.js";
import { httpStatusFor } from "../../../src/rest/status-table.js";
import { CashuRedeemer, type CashuRedeemerOptions } from "../../../src/ecash/cashu-redeemer.js";
import { EcashInputEntity, EcashProofEntity, EcashRedemptionEntity } from "../../../src/ecash/ecash.entity.js";
import type { RedeemRequest } from "../../../src/ecash/ecash-redeemer.js";
import { startCashuMint, type TestCashuMint } from "../../fixtures/cashu-mint.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// The redeemer against local mints doing real blind signatures; buyers' tokens are minted by the real
// cashu-ts wallet (NUT-04), so every acceptance below is a real NUT-03 swap.

const PROOF_KEY = "test-ecash-proof-key-0123456789";

async function refusal(p: Promise<unknown>): Promise<{ reason: string | undefined; status: number; message: string }> {
  try {
    await p;
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const reason = errorReason(err);
    return { reason, status: httpStatusFor(err.code, reason), message: err.rawMessage };
  }
  throw new Error("expected a refusal");
}

const swaps = (mint: TestCashuMint) => mint.requests.filter((r) => r === "POST /v1/swap").length;
const secretsOf = (token: string, mint: TestCashuMint) => getDecodedToken(token, mint.keysets.map((k) => k.id)).proofs.map((p) => p.secret);

describe("Cashu ecash redemption (CashuRedeemer)", function () {
  this.timeout(60_000);
  let ds: DataSource;
  let ds2: DataSource;
  let mint: TestCashuMint; // on the allowlist, units sat and usd
  let feeMint: TestCashuMint; // on the allowlist, 1 sat input fee per proof
  let rogue: TestCashuMint; // a working mint the operator did not list
  let redeemer: CashuRedeemer;
  const logLines: string[] = [];
  const make = (over: Partial<CashuRedeemerOptions> = {}, source = ds) =>
    new CashuRedeemer({
      ds: source,
      mints: [mint.url, feeMint.url + "/"],
      // The safe fetcher would reach every test mint: only the mint allowlist keeps the rogue one out.
      policy: { allow: [mint.hostPort, feeMint.hostPort, rogue.hostPort], allowHttp: true },
      proofKey: PROOF_KEY,
      timeoutMs: 3_000,
      log: pino({ level: "debug" }, new Writable({ write: (chunk, _e, cb) => (logLines.push(String(chunk)), cb()) })),
      ...over,
    });
  const req = (token: string, minAmount: bigint, purpose = "test stake"): RedeemRequest => ({ token, minAmount, unit: "sat", purpose });

  before(async () => {
    ds = await openDataSource(testDatabaseConfig());
    ds2 = await openDataSource(testDatabaseConfig());
    mint = await startCashuMint({ units: ["sat", "usd"], name: "allowed mint" });
    feeMint = await startCashuMint({ inputFeePpk: 1000, name: "fee mint" });
    rogue = await startCashuMint({ name: "rogue mint" });
    redeemer = make();
  });
  after(async () => {
    await Promise.all([mint.close(), feeMint.close(), rogue.close()]);
    await ds.destroy();
    await ds2.destroy();
  });

  it("redeems a real token: swapped at the mint for fresh proofs the service holds, persisted before answering", async () => {
    const token = await mint.mintToken(64);
    const before = swaps(mint);
    const r = await redeemer.redeem(req(token, 50n, "stake on market m1"));
    expect(r).to.include({ mint: mint.url, unit: "sat", amount: 64n, fee: 0n, received: 64n });
    expect(swaps(mint)).to.equal(before + 1);
    // The buyer's proofs are spent at the mint: the token is now worthless to anyone else.
    for (const secret of secretsOf(token, mint)) expect(mint.isSpent(secret)).to.equal(true);

    const row = await ds.manager.findOneByOrFail(EcashRedemptionEntity, { redemptionId: r.redemptionId });
    expect(row).to.include({ state: "redeemed", mint: mint.url, unit: "sat", amount: 64n, received: 64n, minAmount: 50n, purpose: "stake on market m1", error: null });
    expect(await ds.manager.countBy(EcashInputEntity, { redemptionId: r.redemptionId })).to.equal(secretsOf(token, mint).length);
    const held = await ds.manager.findBy(EcashProofEntity, { redemptionId: r.redemptionId });
    expect(held.reduce((s, p) => s + p.amount, 0n)).to.equal(64n);
    for (const p of held) {
      expect(p.state).to.equal("unspent");
      expect(p.c).to.match(/^0[23][0-9a-f]{64}$/);
      expect(p.blinding).to.equal(null);
      expect(p.secret).not.to.match(/^[0-9a-f]{64}$/); // sealed, not the secret itself
    }
    expect((await redeemer.balance()).get(mint.url)! >= 64n).to.equal(true);

    // The held proofs are real money at the mint: unspent there, and spendable by whoever holds them.
    const proofs = await redeemer.proofsOf(r.redemptionId);
    const wallet = await mint.wallet();
    expect((await wallet.checkProofsStates(proofs)).map((s) => s.state)).to.deep.equal(proofs.map(() => CheckStateEnum.UNSPENT));
    const moved = await wallet.receive(getEncodedToken({ mint: mint.url, unit: "sat", proofs }));
    expect(moved.reduce((s, p) => s + p.amount.toBigInt(), 0n)).to.equal(64n);
  });

  it("refuses the same token twice (ecash_spent) without asking the mint; the mint refuses the reuse too", async () => {
    const token = await mint.mintToken(21);
    await redeemer.redeem(req(token, 21n));
    const before = swaps(mint);
    const second = await refusal(redeemer.redeem(req(token, 21n)));
    expect(second).to.include({ reason: "ecash_spent", status: 409 });
    expect(swaps(mint)).to.equal(before); // refused from our own records, before the mint
    // A token carrying any one of the redeemed proofs is refused as well.
    const proofs = getDecodedToken(token, mint.keysets.map((k) => k.id)).proofs;
    expect((await refusal(redeemer.redeem(req(getEncodedToken({ mint: mint.url, unit: "sat", proofs: proofs.slice(0, 1) }), 1n)))).reason).to.equal("ecash_spent");
    // And the mint itself refuses the reuse (NUT-00 error 11001).
    const wallet = await mint.wallet();
    try {
      await wallet.receive(token);
      expect.fail("the mint accepted a spent token");
    } catch (err) {
      expect(isMintOperationError(err) && err.code).to.equal(11001);
    }
  });

  it("maps the mint's own double-spend refusal to ecash_spent (a token spent elsewhere first)", async () => {
    const token = await mint.mintToken(13);
    await (await mint.wallet()).receive(token); // the buyer spends it elsewhere, then pays us with it
    const before = swaps(mint);
    const refused = await refusal(redeemer.redeem(req(token, 13n)));
    expect(refused).to.include({ reason: "ecash_spent", status: 409 });
    expect(swaps(mint)).to.equal(before + 1);
    const rows = await ds.manager.find(EcashRedemptionEntity, { where: { amount: 13n, state: "refused" } });
    expect(rows.length).to.be.greaterThan(0);
    expect(await ds.manager.countBy(EcashProofEntity, { redemptionId: rows[0]!.redemptionId })).to.equal(0);
  });

  it("refuses a token of a mint not on the allowlist (ecash_mint_not_allowed) without contacting that mint", async () => {
    const token = await rogue.mintToken(32);
    const seen = rogue.requests.length;
    const refused = await refusal(redeemer.redeem(req(token, 10n)));
    expect(refused).to.include({ reason: "ecash_mint_not_allowed", status: 400 });
    expect(refused.message).to.contain(rogue.url);
    expect(rogue.requests.length).to.equal(seen);
    for (const secret of secretsOf(token, rogue)) expect(rogue.isSpent(secret)).to.equal(false);
  });

  it("refuses a token in another unit (ecash_wrong_unit)", async () => {
    const token = await mint.mintToken(50, "usd");
    const before = mint.requests.length;
    expect(await refusal(redeemer.redeem(req(token, 1n)))).to.include({ reason: "ecash_wrong_unit", status: 400 });
    expect(mint.requests.length).to.equal(before);
  });

  it("refuses a token worth too little (ecash_insufficient), counting the mint's input fee, and leaves it unspent", async () => {
    const small = await mint.mintToken(10);
    const before = mint.requests.length;
    const refused = await refusal(redeemer.redeem(req(small, 20n)));
    expect(refused).to.include({ reason: "ecash_insufficient", status: 400 });
    expect(mint.requests.length).to.equal(before);
    for (const secret of secretsOf(small, mint)) expect(mint.isSpent(secret)).to.equal(false);

    // 8 sat in one proof at a mint charging 1 sat per input: nets 7.
    const feeToken = await feeMint.mintToken(8);
    expect(getDecodedToken(feeToken, feeMint.keysets.map((k) => k.id)).proofs).to.have.length(1);
    expect(await refusal(redeemer.redeem(req(feeToken, 8n)))).to.include({ reason: "ecash_insufficient", status: 400 });
    const r = await redeemer.redeem(req(feeToken, 7n));
    expect(r).to.include({ amount: 8n, fee: 1n, received: 7n });
    const held = await ds.manager.findBy(EcashProofEntity, { redemptionId: r.redemptionId });
    expect(held.reduce((s, p) => s + p.amount, 0n)).to.equal(7n);
  });

  it("refuses malformed tokens (ecash_invalid), and releases the proofs of a token the mint refused as invalid", async () => {
    for (const bad of ["", "hello", "cashuBnot-really-a-token", "cashuA" + Buffer.from('{"token":[]}').toString("base64url")]) {
      expect(await refusal(redeemer.redeem(req(bad, 1n)))).to.include({ reason: "ecash_invalid", status: 400 });
    }
    const token = await mint.mintToken(7); // 4 + 2 + 1
    const proofs = getDecodedToken(token, mint.keysets.map((k) => k.id)).proofs;
    // A P2PK-locked secret is not payable to the service: refused before the mint.
    const locked: Proof[] = proofs.map((p, i) => (i === 0 ? { ...p, secret: JSON.stringify(["P2PK", { nonce: "00", data: "02" + "11".repeat(32) }]) } : p));
    expect(await refusal(redeemer.redeem(req(getEncodedToken({ mint: mint.url, unit: "sat", proofs: locked }), 1n)))).to.include({ reason: "ecash_invalid" });
    // A forged proof (a secret the mint never signed) is refused by the mint (NUT 10003)...
    const forged: Proof[] = proofs.map((p, i) => (i === 0 ? { ...p, secret: randomBytes(32).toString("hex") } : p));
    const before = swaps(mint);
    const refused = await refusal(redeemer.redeem(req(getEncodedToken({ mint: mint.url, unit: "sat", proofs: forged }), 1n)));
    expect(refused).to.include({ reason: "ecash_invalid", status: 400 });
    expect(refused.message).to.contain("10003");
    expect(swaps(mint)).to.equal(before + 1);
    // ...and the genuine proofs it carried were released: the genuine token still redeems.
    expect(await redeemer.redeem(req(token, 7n))).to.include({ amount: 7n });
  });

  it("sends every mint request through the safe fetcher (a mint on a private address it does not allow is never reached)", async () => {
    const token = await mint.mintToken(6);
    const before = mint.requests.length;
    const guarded = make({ policy: { allow: [], allowHttp: true } });
    expect(await refusal(guarded.redeem(req(token, 6n)))).to.include({ reason: "ecash_mint_unavailable", status: 503 });
    expect(mint.requests.length).to.equal(before);
  });

  it("refuses every token when no mint is configured (ecash_disabled)", async () => {
    const token = await mint.mintToken(5);
    expect(await refusal(make({ mints: [] }).redeem(req(token, 1n)))).to.include({ reason: "ecash_disabled", status: 409 });
  });

  it("answers 503 uncharged when the mint is down, and the same token redeems once it is back", async () => {
    // A server that never read this mint's keys: nothing can be checked, nothing is claimed.
    const coldToken = await mint.mintToken(16);
    const cold = make();
    await mint.down();
    try {
      expect(await refusal(cold.redeem(req(coldToken, 16n)))).to.include({ reason: "ecash_mint_unavailable", status: 503 });
    } finally {
      await mint.up();
    }
    for (const secret of secretsOf(coldToken, mint)) expect(mint.isSpent(secret)).to.equal(false);
    expect(await cold.redeem(req(coldToken, 16n))).to.include({ amount: 16n });

    // A server with the keys cached: the mint goes down just before the swap.
    const warmToken = await mint.mintToken(24);
    await mint.down();
    let interruptedId: string;
    try {
      expect(await refusal(redeemer.redeem(req(warmToken, 24n)))).to.include({ reason: "ecash_mint_unavailable", status: 503 });
      const row = await ds.manager.findOneOrFail(EcashRedemptionEntity, { where: { amount: 24n, state: "interrupted" } });
      interruptedId = row.redemptionId;
      // Down, a retry is still 503 (and still resumable).
      expect((await refusal(redeemer.redeem(req(warmToken, 24n)))).status).to.equal(503);
    } finally {
      await mint.up();
    }
    for (const secret of secretsOf(warmToken, mint)) expect(mint.isSpent(secret)).to.equal(false); // uncharged
    const r = await redeemer.redeem(req(warmToken, 24n));
    expect(r).to.include({ redemptionId: interruptedId, amount: 24n, received: 24n });
    expect(await ds.manager.findOneByOrFail(EcashRedemptionEntity, { redemptionId: interruptedId })).to.include({ state: "redeemed" });
  });

  it("recovers a swap the mint did but could not report (NUT-09 restore): charged once, held once", async () => {
    const token = await mint.mintToken(40);
    mint.mode = "drop-swap-response";
    try {
      expect(await refusal(redeemer.redeem(req(token, 40n)))).to.include({ reason: "ecash_mint_unavailable", status: 503 });
    } finally {
      mint.mode = "up";
    }
    for (const secret of secretsOf(token, mint)) expect(mint.isSpent(secret)).to.equal(true); // the mint did swap
    const before = swaps(mint);
    const r = await redeemer.redeem(req(token, 40n));
    expect(r).to.include({ amount: 40n, received: 40n });
    expect(swaps(mint)).to.equal(before); // restored, not swapped again
    const held = await redeemer.proofsOf(r.redemptionId);
    expect(held.reduce((s, p) => s + p.amount.toBigInt(), 0n)).to.equal(40n);
    const states = await (await mint.wallet()).checkProofsStates(held);
    expect(states.every((s) => s.state === CheckStateEnum.UNSPENT)).to.equal(true);
    expect((await refusal(redeemer.redeem(req(token, 40n)))).reason).to.equal("ecash_spent");
  });

  it("lets exactly one of 10 parallel redemptions of one token succeed, across two server instances", async () => {
    const token = await mint.mintToken(100);
    const other = make({}, ds2); // a second process: own pool, own key cache
    const before = swaps(mint);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : redeemer).redeem(req(token, 100n))));
    const ok = results.filter((r) => r.status === "fulfilled");
    expect(ok).to.have.length(1);
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === "rejected")) {
      expect(r.reason).to.be.instanceOf(ConnectError);
      expect(errorReason(r.reason as ConnectError)).to.equal("ecash_spent");
    }
    expect(swaps(mint)).to.equal(before + 1);
    const { redemptionId } = (ok[0] as PromiseFulfilledResult<{ redemptionId: string }>).value;
    const held = await ds.manager.findBy(EcashProofEntity, { redemptionId });
    expect(held.reduce((s, p) => s + p.amount, 0n)).to.equal(100n);
  });

  it("joins the caller's transaction when given one (stake and redemption commit together)", async () => {
    const token = await mint.mintToken(9);
    const r = await runInTransaction(ds, (m) => redeemer.redeem(req(token, 9n), m));
    expect(await ds.manager.findOneByOrFail(EcashRedemptionEntity, { redemptionId: r.redemptionId })).to.include({ state: "redeemed" });
    expect((await redeemer.proofsOf(r.redemptionId)).length).to.be.greaterThan(0);
  });

  it("never writes a token or a proof secret to the log", async () => {
    const all = logLines.join("\n");
    expect(all).to.contain("ecash redeemed");
    expect(all).not.to.match(/cashu[AB][A-Za-z0-9_-]{20,}/);
    // This suite's proofs only: other suites sharing the database seal theirs under other keys.
    const stored = await ds.manager.find(EcashProofEntity, { where: [{ mint: mint.url }, { mint: feeMint.url }] });
    for (const p of stored) {
      const secret = (await redeemer.proofsOf(p.redemptionId)).find((x) => x.C === p.c)?.secret;
      if (secret) expect(all).not.to.contain(secret);
    }
  });
});

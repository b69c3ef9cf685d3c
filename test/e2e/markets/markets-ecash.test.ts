import { expect } from "chai";
import { ConnectError, createClient } from "@connectrpc/connect";
import { decodePaymentRequest } from "@cashu/cashu-ts";
import { errorReason } from "../../../src/platform/rpc/errors.js";
import { createConnectTransport } from "@connectrpc/connect-node";
import { MarketsService } from "../../../gen/svc/markets/v1/markets_service_pb.js";
import { MarketPositionEntity } from "../../../src/markets/markets.entity.js";
import { MARKETS_ACCOUNTS } from "../../../src/markets/markets-ledger.js";
import { accountBalance } from "../../../src/ledger/ledger.js";
import { CashuRedeemer } from "../../../src/ecash/cashu-redeemer.js";
import { MarketsServiceImpl } from "../../../src/markets/markets.service.js";
import { MarketsGrant } from "../../../src/markets/markets-skus.js";
import { AgentStore } from "../../../src/registry/agent-store.js";
import { createLogger } from "../../../src/platform/log.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { startCashuMint, type TestCashuMint } from "../../fixtures/cashu-mint.js";
import { call, createMarket, expectBooksGreen, inHours, OPERATOR_KEY, type Json } from "../../fixtures/markets.js";

// Stakes and plans paid in ecash against a local Cashu mint with real blind signatures (the
// CashuRedeemer swaps every token at the mint before anything is accepted): LMSR prices moved exactly,
// the 0.5 percent fee, double spends and foreign mints refused, signals from the moves, resolution with
// payouts to the winners' balances, the Operator's revenue share, and the books green throughout.

/** The textbook LMSR, computed independently of src/markets/lmsr.ts. */
const cost = (qy: number, qn: number, b: number) => b * Math.log(Math.exp(qy / b) + Math.exp(qn / b));
const price = (qy: number, qn: number, b: number) => Math.exp(qy / b) / (Math.exp(qy / b) + Math.exp(qn / b));
/** Shares (in milli-shares, rounded down) that `stake` sats buy on one side. */
function expectedMilli(stake: number, qSide: number, qOther: number, b: number): number {
  const delta = b * Math.log((Math.exp(stake / b) * (Math.exp(qSide / b) + Math.exp(qOther / b)) - Math.exp(qOther / b)) / Math.exp(qSide / b));
  return Math.floor(delta * 1000);
}
const shares = (text: string) => Number(text);

describe("markets API: ecash stakes, plans, resolution and payouts", function () {
  this.timeout(120_000);
  let mint: TestCashuMint;
  let foreign: TestCashuMint;
  let srv: TestServer;
  let alice: RegisteredAgent;
  let bob: RegisteredAgent;
  let carol: RegisteredAgent;
  let market: Json;
  let other: Json;
  const positions: Record<string, Json> = {};

  const predict = (agent: RegisteredAgent, body: Json, token?: string) => call(srv.url, "POST", "/markets/predict", { key: agent.api_key, body, headers: token ? { "x-402-payment": token } : {} });
  const subscribe = (agent: RegisteredAgent, plan: string, token?: string, body: Json = {}) => call(srv.url, "POST", "/subscriptions", { key: agent.api_key, body: { plan, ...body }, headers: token ? { "x-402-payment": token } : {} });
  const account = async (agent: RegisteredAgent) => (await call(srv.url, "GET", "/account", { key: agent.api_key })).body;
  const getMarket = async (id: string) => (await call(srv.url, "GET", `/markets/${id}`)).body;

  before(async () => {
    mint = await startCashuMint();
    foreign = await startCashuMint();
    srv = await startTestServer({ OPERATOR_API_KEY: OPERATOR_KEY, CASHU_MINTS: mint.url, SAFE_FETCH_ALLOW: `${mint.hostPort},${foreign.hostPort}` });
    [alice, bob, carol] = [await registerAgent(srv), await registerAgent(srv), await registerAgent(srv)];
    market = await createMarket(srv, { title: "Will the DEX ship v4 hooks this quarter?", category: "defi", close_time: inHours(48) });
    other = await createMarket(srv, { title: "Will BTC dominance exceed 60 percent?", category: "crypto", close_time: inHours(48), liquidity_b_sats: 5_000 });
  });
  after(async () => {
    await srv?.close();
    await mint?.close();
    await foreign?.close();
  });

  it("an Explorer cannot stake and its token is never touched; a stake needs a token", async () => {
    const swaps = mint.requests.filter((r) => r.includes("/v1/swap")).length;
    const token = await mint.mintToken(500);
    const res = await predict(alice, { market_id: market.market_id, outcome: "yes" }, token);
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal("tier_required");
    expect(mint.requests.filter((r) => r.includes("/v1/swap")).length).to.equal(swaps);
    const missing = await subscribe(alice, "contributor");
    expect(missing.status).to.equal(402);
    expect(missing.body.error.code).to.equal("ecash_required");
  });

  it("a Contributor month costs 10000 sats of ecash: too little is refused, the change goes to the balance", async () => {
    const short = await subscribe(alice, "contributor", await mint.mintToken(9_000));
    expect(short.status).to.equal(400);
    expect(short.body.error.code).to.equal("ecash_insufficient");
    const res = await subscribe(alice, "contributor", await mint.mintToken(10_500));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.subscription).to.include({ plan: "contributor", price_sats: 10_000, paid_with: "ecash" });
    expect(res.body.change_sats).to.equal(500);
    expect(await account(alice)).to.include({ tier: "contributor", daily_limit: 100, balance_sats: 500 });
    expect((await subscribe(bob, "contributor", await mint.mintToken(10_000))).status).to.equal(201);
    await expectBooksGreen(srv.ds);
  });

  it("a stake buys LMSR shares with its value after the 0.5 percent fee and moves the price exactly", async () => {
    const token = await mint.mintToken(2_000);
    const res = await predict(alice, { market_id: market.market_id, outcome: "yes" }, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ market_id: market.market_id, outcome: "yes", paid_sats: 2000, fee_sats: 10, stake_sats: 1990, paid_with: "ecash", yes_probability_before: 0.5 });
    const b = 10_000;
    const milli = expectedMilli(1990, 0, 0, b);
    expect(Math.abs(Math.round(shares(res.body.shares) * 1000) - milli)).to.be.at.most(1);
    const q1 = shares(res.body.shares);
    expect(res.body.yes_probability).to.be.closeTo(price(q1, 0, b), 1e-12);
    expect(cost(q1, 0, b) - cost(0, 0, b)).to.be.within(1990 - 0.01, 1990);
    positions.alice = res.body;

    const after = await getMarket(market.market_id);
    expect(after).to.include({ yes_stake_sats: 1990, no_stake_sats: 0, volume_sats: 2000, positions_count: 1, yes_shares: res.body.shares, no_shares: "0.000" });
    expect(after.yes_probability).to.equal(res.body.yes_probability);

    const again = await predict(alice, { market_id: market.market_id, outcome: "yes" }, token);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal("ecash_spent");
    const alien = await predict(alice, { market_id: market.market_id, outcome: "yes" }, await foreign.mintToken(1_000));
    expect(alien.status).to.equal(400);
    expect(alien.body.error.code).to.equal("ecash_mint_not_allowed");
    const none = await predict(alice, { market_id: market.market_id, outcome: "yes" });
    expect(none.status).to.equal(402);
    expect((await getMarket(market.market_id)).positions_count).to.equal(1);
  });

  it("a Connect client stakes with the token in x-cashu; the price moves from the new state", async () => {
    const client = createClient(MarketsService, createConnectTransport({ baseUrl: srv.url, httpVersion: "1.1" }));
    const before = await getMarket(market.market_id);
    const res = await client.predict({ marketId: market.market_id, outcome: "no" }, { headers: { authorization: `Bearer ${bob.api_key}`, "x-cashu": await mint.mintToken(6_000) } });
    expect(res.paidSats).to.equal(6000n);
    expect(res.feeSats).to.equal(30n);
    expect(res.stakeSats).to.equal(5970n);
    const b = 10_000;
    const qy = shares(before.yes_shares);
    const milli = expectedMilli(5970, 0, qy, b);
    expect(Math.abs(Math.round(shares(res.shares) * 1000) - milli)).to.be.at.most(1);
    expect(res.yesProbabilityBefore).to.equal(before.yes_probability);
    expect(res.yesProbability).to.be.closeTo(price(qy, shares(res.shares), b), 1e-12);
    expect(cost(qy, shares(res.shares), b) - cost(qy, 0, b)).to.be.within(5970 - 0.01, 5970);
    positions.bob = { shares: res.shares, position_id: res.positionId };

    // Without a token: 402 ecash_required, with a NUT-18 payment request (NUT-24 X-Cashu) naming the amount and the mint.
    const err = await client.predict({ marketId: market.market_id, outcome: "no", stakeSats: 700n }, { headers: { authorization: `Bearer ${bob.api_key}` } }).catch((e) => ConnectError.from(e));
    expect(errorReason(err as ConnectError)).to.equal("ecash_required");
    const request = decodePaymentRequest((err as ConnectError).metadata.get("x-cashu")!);
    expect(request.unit).to.equal("sat");
    expect(Number(request.amount)).to.equal(700);
    expect(request.mints).to.deep.equal([mint.url]);
  });

  it("a stake can be paid from the markets balance, never beyond it", async () => {
    const res = await predict(alice, { market_id: market.market_id, outcome: "yes", stake_sats: 500, pay_from_balance: true });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ paid_with: "balance", paid_sats: 500, fee_sats: 3, stake_sats: 497 });
    positions.alice2 = res.body;
    expect((await account(alice)).balance_sats).to.equal(0);
    const broke = await predict(alice, { market_id: market.market_id, outcome: "yes", stake_sats: 100, pay_from_balance: true });
    expect(broke.status).to.equal(402);
    expect(broke.body.error.code).to.equal("insufficient_balance");
    await expectBooksGreen(srv.ds);
  });

  it("signals come from the price moves, filtered by category and only for Contributors", async () => {
    // A big yes stake moves the price well past the 5-point threshold.
    const big = await predict(bob, { market_id: market.market_id, outcome: "yes" }, await mint.mintToken(12_000));
    expect(big.status).to.equal(201);
    positions.bob2 = big.body;
    const now = await getMarket(market.market_id);
    const res = await call(srv.url, "GET", "/signals/latest?category=defi", { key: alice.api_key });
    expect(res.status).to.equal(200);
    expect(res.body.window_hours).to.equal(24);
    const shift = (res.body.signals as Json[]).find((s) => s.market_id === market.market_id && s.signal_type === "probability_shift")!;
    expect(shift).to.include({ category: "defi" });
    expect(shift.change).to.be.closeTo(now.yes_probability - 0.5, 1e-4);
    expect(shift.yes_probability).to.be.closeTo(now.yes_probability, 1e-4);
    const volume = 1990 + 5970 + 497 + big.body.stake_sats;
    expect(shift.confidence).to.be.closeTo(Math.min(1, Math.abs(now.yes_probability - 0.5) / 0.25) * (1 - Math.exp(-volume / 10_000)), 1e-4);
    expect(shift.title).to.contain(market.title);
    expect((await call(srv.url, "GET", "/signals/latest?category=macro", { key: alice.api_key })).body.signals ?? []).to.deep.equal([]);
    const explorer = await call(srv.url, "GET", "/signals/latest", { key: carol.api_key });
    expect(explorer.status).to.equal(403);
  });

  it("the operator resolves the market: winners are paid floor(shares) to their balances, the pool empties", async () => {
    const pool = -(await accountBalance(srv.ds.manager, MARKETS_ACCOUNTS.pool(market.market_id)));
    const before = await getMarket(market.market_id);
    expect(pool).to.equal(BigInt(before.subsidy_sats + before.yes_stake_sats + before.no_stake_sats));
    const res = await call(srv.url, "POST", `/admin/markets/${market.market_id}/resolve`, { key: OPERATOR_KEY, body: { outcome: "yes" } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const alicePay = Math.floor(shares(positions.alice.shares)) + Math.floor(shares(positions.alice2.shares));
    const bobPay = Math.floor(shares(positions.bob2.shares));
    expect(res.body).to.include({ payouts_count: 3, payouts_sats: alicePay + bobPay });
    expect(BigInt(res.body.maker_result_sats)).to.equal(pool - BigInt(alicePay + bobPay));
    expect(res.body.maker_result_sats).to.be.at.least(0);
    expect(res.body.market).to.include({ status: "resolved", outcome: "yes" });
    expect((await account(alice)).balance_sats).to.equal(alicePay);
    expect((await account(bob)).balance_sats).to.equal(bobPay);
    expect(bobPay).to.be.at.least(10_000);
    const states = (await srv.ds.manager.findBy(MarketPositionEntity, { marketId: market.market_id })).map((p) => `${p.outcome}:${p.state}`).sort();
    expect(states).to.deep.equal(["no:lost", "yes:won", "yes:won", "yes:won"]);
    expect((await account(bob)).positions.find((p: Json) => p.position_id === positions.bob.position_id)).to.include({ state: "lost", payout_sats: 0 });
    expect(await accountBalance(srv.ds.manager, MARKETS_ACCOUNTS.pool(market.market_id))).to.equal(0n);

    // Winnings pay a plan: a renewal starts when the current period ends (a stake's shares are never fewer than its sats).
    const current = (await account(bob)).subscriptions[0];
    const renewed = await subscribe(bob, "contributor", undefined, { pay_from_balance: true });
    expect(renewed.status, JSON.stringify(renewed.body)).to.equal(201);
    expect(renewed.body.subscription).to.include({ paid_with: "balance", start_time: current.end_time });
    expect((await account(bob)).balance_sats).to.equal(bobPay - 10_000);
    const poor = await subscribe(alice, "operator", undefined, { pay_from_balance: true });
    expect(poor.status).to.equal(402);
    expect(poor.body.error.code).to.equal("insufficient_balance");

    // A resolved market takes no stakes, and the token sent is not redeemed: it still pays elsewhere.
    const token = await mint.mintToken(1_000);
    const late = await predict(alice, { market_id: market.market_id, outcome: "no" }, token);
    expect(late.status).to.equal(409);
    expect(late.body.error.code).to.equal("market_resolved");
    expect((await predict(alice, { market_id: other.market_id, outcome: "no" }, token)).status).to.equal(201);
    await expectBooksGreen(srv.ds);
  });

  it("an Operator's fleet lists its members and earns 20 percent of their stake fees", async () => {
    const notYet = await call(srv.url, "POST", "/fleet/join", { key: bob.api_key, body: { operator: carol.name } });
    expect(notYet.status).to.equal(409);
    expect(notYet.body.error.code).to.equal("not_an_operator");
    const op = await subscribe(carol, "operator", await mint.mintToken(50_000));
    expect(op.status).to.equal(201);
    expect(await account(carol)).to.include({ tier: "operator", daily_limit: 0, balance_sats: 0 });
    const joined = await call(srv.url, "POST", "/fleet/join", { key: bob.api_key, body: { operator: carol.name } });
    expect(joined.status).to.equal(200);
    expect(joined.body).to.include({ operator_agent_id: carol.agent_id, operator_tier_active: true, revenue_share_bps: 2000 });
    expect(joined.body.members.map((m: Json) => m.agent_id)).to.deep.equal([bob.agent_id]);
    const listing = await call(srv.url, "GET", `/fleet/${carol.agent_id}`);
    expect(listing.body.members[0]).to.include({ agent_id: bob.agent_id, name: bob.name });

    const res = await predict(bob, { market_id: other.market_id, outcome: "yes" }, await mint.mintToken(10_000));
    expect(res.body).to.include({ fee_sats: 50, stake_sats: 9950 });
    expect((await account(carol)).balance_sats).to.equal(10);
    expect((await account(bob)).fleet_operator).to.equal(carol.agent_id);
    expect((await call(srv.url, "POST", "/fleet/leave", { key: bob.api_key, body: {} })).body.operator_agent_id).to.equal(carol.agent_id);
    await expectBooksGreen(srv.ds);
  });

  it("ecash redeemed for a stake that was never recorded (a crash between the swap and the stake) is credited at start", async () => {
    const redeemer = new CashuRedeemer({ ds: srv.ds, mints: [mint.url], policy: { allow: [mint.hostPort], allowHttp: true }, proofKey: srv.config.cashu.proofKey });
    const r = await redeemer.redeem({ token: await mint.mintToken(777), minAmount: 100n, unit: "sat", purpose: `markets:${carol.agent_id}:stake on ${other.market_id} (yes)` });
    const service = new MarketsServiceImpl({ ds: srv.ds, agents: new AgentStore(srv.ds), gate: undefined as never, grant: new MarketsGrant(), operatorKeyDigest: undefined, publicBaseUrl: undefined, log: createLogger("silent") });
    const before = (await account(carol)).balance_sats;
    expect(await service.recoverOrphanedEcash(60_000)).to.equal(0); // still within the grace period
    expect(await service.recoverOrphanedEcash(0)).to.equal(1);
    expect(await service.recoverOrphanedEcash(0)).to.equal(0);
    expect((await account(carol)).balance_sats).to.equal(before + Number(r.received));
    await expectBooksGreen(srv.ds);
  });
});

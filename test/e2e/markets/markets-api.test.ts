import { expect } from "chai";
import { createHash } from "node:crypto";
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { toJson } from "@bufbuild/protobuf";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { MarketsService } from "../../../gen/svc/markets/v1/markets_service_pb.js";
import { PaymentRequiredSchema } from "../../../gen/svc/payment/v1/x402_pb.js";
import { errorReason } from "../../../src/platform/rpc/errors.js";
import { findProtocol, scoreProtocol } from "../../../src/markets/compliance.js";
import { AGENT_PROOF_KIND } from "../../../src/markets/markets-skus.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { payingFetchUpTo } from "../../fixtures/large-payments.js";
import { call, createMarket, expectBooksGreen, inHours, OPERATOR_KEY, paying } from "../../fixtures/markets.js";

// The markets API without ecash: operator-created markets listed and read over REST and Connect, the
// compliance check and agent proofs paid in USDC through x402 (the real @x402/fetch client), the
// Compliance API monthly plan, and the refusals that charge nothing.

describe("markets API: markets, compliance checks and agent proofs", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let explorer: RegisteredAgent;
  let buyer: Buyer;
  const made: Record<string, any> = {};

  before(async () => {
    srv = await startTestServer({ OPERATOR_API_KEY: OPERATOR_KEY });
    explorer = await registerAgent(srv);
    buyer = await newBuyer(srv, 150);
  });
  after(() => srv?.close());

  it("the operator creates markets; the public lists them by status and category and reads one", async () => {
    made.defi = await createMarket(srv, { title: "Will protocol X pass its audit by December?", description: "Resolves yes if the audit report is published.", category: "defi", close_time: inHours(48), liquidity_b_sats: 20_000 });
    made.macro = await createMarket(srv, { title: "Will the Fed cut rates in December?", category: "macro", close_time: inHours(24) });
    made.soon = await createMarket(srv, { title: "Will BTC close the hour above 90k?", category: "crypto", close_time: new Date(Date.now() + 1500).toISOString() });
    made.done = await createMarket(srv, { title: "Will tokenized treasuries pass 10B?", category: "rwa", close_time: inHours(1) });
    expect(made.defi).to.include({ title: "Will protocol X pass its audit by December?", category: "defi", status: "open", yes_probability: 0.5, no_probability: 0.5, liquidity_b_sats: 20_000, yes_shares: "0.000", subsidy_sats: Math.ceil(20_000 * Math.LN2), fee_bps: 50, market_maker: "lmsr" });
    expect(made.macro.liquidity_b_sats).to.equal(10_000);
    const resolved = await call(srv.url, "POST", `/admin/markets/${made.done.market_id}/resolve`, { key: OPERATOR_KEY, body: { outcome: "no" } });
    expect(resolved.status).to.equal(200);
    expect(resolved.body).to.include({ payouts_count: 0, payouts_sats: 0, maker_result_sats: Math.ceil(10_000 * Math.LN2) });
    expect(resolved.body.market).to.include({ status: "resolved", outcome: "no" });
    await new Promise((r) => setTimeout(r, 1600)); // `soon` passes its close time

    const ids = async (query: string) => ((await call(srv.url, "GET", `/markets${query}`)).body.markets as any[]).map((m) => m.market_id);
    expect(await ids("")).to.include.members([made.defi.market_id, made.macro.market_id, made.soon.market_id, made.done.market_id]);
    expect(await ids("?category=defi")).to.deep.equal([made.defi.market_id]);
    expect(await ids("?status=open")).to.include.members([made.defi.market_id, made.macro.market_id]).and.not.include(made.soon.market_id);
    expect(await ids("?status=closed")).to.deep.equal([made.soon.market_id]);
    expect(await ids("?status=resolved&category=rwa")).to.deep.equal([made.done.market_id]);
    expect(await ids("?status=open&category=rwa")).to.deep.equal([]);

    const one = await call(srv.url, "GET", `/markets/${made.defi.market_id}`);
    expect(one.status).to.equal(200);
    expect(one.body).to.include({ market_id: made.defi.market_id, title: made.defi.title, yes_probability: 0.5, status: "open", description: "Resolves yes if the audit report is published." });
    expect(one.body.close_time).to.equal(made.defi.close_time);

    expect((await call(srv.url, "GET", "/markets/mkt_nothing")).body.error.code).to.equal("market_not_found");
    const bad = await call(srv.url, "GET", "/markets?status=pending");
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal("invalid_status");
    expect((await call(srv.url, "GET", "/markets?category=sports")).status).to.equal(400);
  });

  it("a Connect client lists and reads the same markets", async () => {
    const client = createClient(MarketsService, createConnectTransport({ baseUrl: srv.url, httpVersion: "1.1" }));
    const list = await client.listMarkets({ category: "macro" });
    expect(list.markets.map((m) => m.marketId)).to.deep.equal([made.macro.market_id]);
    const got = await client.getMarket({ marketId: made.defi.market_id });
    expect(got.market?.yesProbability).to.equal(0.5);
    expect(got.market?.liquidityBSats).to.equal(20_000n);
    const err = await client.getMarket({ marketId: "mkt_missing" }).catch((e) => ConnectError.from(e));
    expect((err as ConnectError).code).to.equal(Code.NotFound);
    expect(errorReason(err as ConnectError)).to.equal("market_not_found");
  });

  it("market creation and resolution need the operator key", async () => {
    const body = { title: "Will this be refused?", category: "defi", close_time: inHours(1) };
    expect((await call(srv.url, "POST", "/admin/markets", { body })).status).to.equal(401);
    expect((await call(srv.url, "POST", "/admin/markets", { key: explorer.api_key, body })).status).to.equal(401);
    expect((await call(srv.url, "POST", `/admin/markets/${made.defi.market_id}/resolve`, { key: explorer.api_key, body: { outcome: "yes" } })).status).to.equal(401);
    const past = await call(srv.url, "POST", "/admin/markets", { key: OPERATOR_KEY, body: { ...body, close_time: new Date(Date.now() - 1000).toISOString() } });
    expect(past.status).to.equal(400);
    expect(past.body.error.code).to.equal("invalid_close_time");
    const again = await call(srv.url, "POST", `/admin/markets/${made.done.market_id}/resolve`, { key: OPERATOR_KEY, body: { outcome: "yes" } });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal("market_resolved");
  });

  it("signals, stakes and the paid routes need an API key; signals and stakes a paid tier", async () => {
    expect((await call(srv.url, "GET", "/signals/latest")).status).to.equal(401);
    expect((await call(srv.url, "POST", "/compliance/check", { body: { protocol: "aave" } })).body.error.code).to.equal("auth_required");
    expect((await call(srv.url, "POST", "/agents/proofs", { body: { kind: 1, content_sha256: "a".repeat(64) } })).status).to.equal(401);
    const signals = await call(srv.url, "GET", "/signals/latest?category=defi", { key: explorer.api_key });
    expect(signals.status).to.equal(403);
    expect(signals.body.error.code).to.equal("tier_required");
    const stake = await call(srv.url, "POST", "/markets/predict", { key: explorer.api_key, body: { market_id: made.defi.market_id, outcome: "yes" }, headers: { "x-402-payment": "cashuBnotevenread" } });
    expect(stake.status).to.equal(403);
    expect(stake.body.error.message).to.contain("read-only");
    // This server has no mint on its allowlist: ecash is refused outright, never accepted unverified.
    const plan = await call(srv.url, "POST", "/subscriptions", { key: explorer.api_key, body: { plan: "contributor" }, headers: { "x-402-payment": "cashuBo2FteBtodHRwOi8vMTI3LjAuMC4xOjEvbm90LWEtbWludA" } });
    expect(plan.status).to.equal(409);
    expect(plan.body.error.code).to.equal("ecash_disabled");
    const account = await call(srv.url, "GET", "/account", { key: explorer.api_key });
    expect(account.body).to.include({ agent_id: explorer.agent_id, tier: "explorer", daily_limit: 10, balance_sats: 0, compliance_plan: false });
  });

  it("a compliance check costs 0.50 USD through x402 and scores the protocol from the documented factors", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const unpaid = await call(srv.url, "POST", "/compliance/check", { key: explorer.api_key, body: { protocol: "Aave V3" } });
    expect(unpaid.status).to.equal(402);
    const challenge = JSON.parse(Buffer.from(unpaid.headers.get("payment-required")!, "base64").toString());
    expect(challenge.accepts[0].amount).to.equal("500000");

    const res = await call(srv.url, "POST", "/compliance/check", { key: explorer.api_key, body: { protocol: "Aave V3" }, fetcher: paying(buyer) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const expected = scoreProtocol(findProtocol("aave")!, new Date());
    expect(res.body).to.include({ protocol: "aave", name: "Aave", risk_score: expected.risk_score, tail_risk_pct: expected.tail_risk_pct, billing: "per_call", data_as_of: expected.data_as_of });
    expect(res.body.risk_score).to.be.within(0, 100);
    expect(res.body.factor_details.map((f: any) => f.name)).to.deep.equal(["audits", "admin_key", "oracle_design", "age", "incidents", "tvl_concentration"]);
    expect(res.body.factors[4]).to.contain("CRV market manipulation");
    expect(res.body.sources.length).to.be.greaterThan(0);
    expect(res.body.payment_proof.tx_hash).to.match(/^0x[0-9a-f]{64}$/);
    expect(res.body.payment_proof.amount_usd).to.equal(0.5);
    expect(res.headers.get("payment-response")).to.be.a("string");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 500_000n);
  });

  it("a Connect client gets the x402 challenge as an error detail and pays the compliance check in metadata", async () => {
    const client = createClient(MarketsService, createConnectTransport({ baseUrl: srv.url, httpVersion: "1.1" }));
    const auth = { authorization: `Bearer ${explorer.api_key}` };
    const err = await client.checkCompliance({ protocol: "curve" }, { headers: auth }).catch((e) => ConnectError.from(e));
    expect(errorReason(err as ConnectError)).to.equal("payment_required");
    const required = (err as ConnectError).findDetails(PaymentRequiredSchema).find((d) => d.x402Version === 2)!;
    const payload = await new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)).createPaymentPayload(toJson(PaymentRequiredSchema, required) as never);
    const before = await usdcBalance(srv, buyer.address);
    const res = await client.checkCompliance({ protocol: "curve" }, { headers: { ...auth, "payment-signature": encodePaymentSignatureHeader(payload) } });
    expect(res).to.include({ protocol: "curve", billing: "per_call", riskScore: scoreProtocol(findProtocol("curve")!, new Date()).risk_score });
    expect(res.paymentProof?.amount).to.equal("500000");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 500_000n);
  });

  it("an unknown protocol is a clear 404 listing the known ones, before any challenge or charge", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await call(srv.url, "POST", "/compliance/check", { key: explorer.api_key, body: { protocol: "NotARealSwap" }, fetcher: paying(buyer) });
    expect(res.status).to.equal(404);
    expect(res.headers.get("payment-required")).to.equal(null);
    expect(res.body.error.code).to.equal("protocol_unknown");
    expect(res.body.error.message).to.contain("uniswap").and.contain("nothing was charged");
    expect((await call(srv.url, "POST", "/compliance/check", { key: explorer.api_key, body: {} })).status).to.equal(400);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("the internal markets SKUs are not in the catalog and cannot be bought around /markets-api", async () => {
    const catalog = (await (await fetch(`${srv.url}/v1/services`)).json()) as any;
    expect(JSON.stringify(catalog)).to.not.contain("markets.compliance-check");
    const before = await usdcBalance(srv, buyer.address);
    const direct = await paying(buyer)(`${srv.url}/v1/services/markets.compliance-check`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ protocol: "aave", agent_id: explorer.agent_id, markets_grant: "0".repeat(64) }) });
    expect(direct.status).to.equal(409);
    expect(((await direct.json()) as any).error.code).to.equal("markets_api_only");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("an agent proof costs 0.001 USD and is recorded on the proof rail as the agent's own claim", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const sha = createHash("sha256").update("my deliverable").digest("hex");
    const bad = await call(srv.url, "POST", "/agents/proofs", { key: explorer.api_key, body: { kind: 30110, content_sha256: "xyz" }, fetcher: paying(buyer) });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.contain("content_sha256");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);

    const res = await call(srv.url, "POST", "/agents/proofs", { key: explorer.api_key, body: { kind: 30110, content_sha256: sha.toUpperCase(), label: "build 42" }, fetcher: paying(buyer) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ kind: AGENT_PROOF_KIND, declared_kind: 30110, fee_usd: 0.001 });
    expect(res.body.proof_url).to.equal(`/v1/proofs/${res.body.proof_id}`);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 1000n);

    const record = (await (await fetch(`${srv.url}${res.body.proof_url}`)).json()) as any;
    const text = JSON.stringify(record);
    expect(text).to.contain(sha).and.contain(explorer.agent_id).and.contain("build 42");
    expect(text).to.contain(res.body.record_sha256);
    expect(text).to.contain(String(AGENT_PROOF_KIND));
  });

  it("the Compliance API monthly plan (99 USD through x402) covers checks without further payment", async () => {
    const other = await registerAgent(srv);
    const planBefore = await usdcBalance(srv, buyer.address);
    const sub = await call(srv.url, "POST", "/subscriptions", { key: other.api_key, body: { plan: "compliance" }, fetcher: payingFetchUpTo(buyer, 99) });
    expect(sub.status, JSON.stringify(sub.body)).to.equal(201);
    expect(sub.body.subscription).to.include({ plan: "compliance", price_usd: 99, paid_with: "x402" });
    const days = (Date.parse(sub.body.subscription.end_time) - Date.parse(sub.body.subscription.start_time)) / 86_400_000;
    expect(days).to.equal(30);
    expect(await usdcBalance(srv, buyer.address)).to.equal(planBefore - 99_000_000n);
    const before = await usdcBalance(srv, buyer.address);
    const res = await call(srv.url, "POST", "/compliance/check", { key: other.api_key, body: { protocol: "uniswap" } });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ protocol: "uniswap", billing: "monthly_plan" });
    expect(res.body.payment_proof ?? null).to.equal(null);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
    expect((await call(srv.url, "GET", "/account", { key: other.api_key })).body.compliance_plan).to.equal(true);
    await expectBooksGreen(srv.ds);
  });
});

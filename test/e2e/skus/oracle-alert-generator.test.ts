import { expect } from "chai";
import http from "node:http";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { TestServer } from "../../fixtures/test-server.js";
import { withUpstream, type UpstreamSetup } from "../../fixtures/upstream.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { registerAgent } from "../../fixtures/agents.js";
import { onboard } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { PriceAlertEntity } from "../../../src/alerts/price-alert.entity.js";
import { AlertGeneratorOutput } from "../../../src/skus/oracle-alert-generator.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };
const PRICE = 20_000n; // $0.02

// A Coinbase Exchange and a Kraken on loopback answering in their documented ticker formats; the test
// moves prices and takes the venue down, and the server's scheduler (every 0.2 s here) evaluates.
const market = { btc: "97000.00", ethDown: false };
const venues: http.RequestListener = (req, res) => {
  const url = new URL(req.url!, "http://x");
  const send = (status: number, body: unknown) => res.writeHead(status, json).end(JSON.stringify(body));
  const ticker = (price: string, time = new Date().toISOString()) => send(200, { ask: price, bid: price, volume: "10", trade_id: 1, price, size: "0.1", time });
  if (url.pathname === "/coinbase/products/BTC-USD/ticker") return ticker(market.btc);
  if (url.pathname === "/coinbase/products/ETH-USD/ticker") return market.ethDown ? send(503, { message: "service unavailable" }) : ticker("3000.00");
  if (url.pathname === "/coinbase/products/SOL-USD/ticker") return ticker("150.00", "2020-01-01T00:00:00.000Z"); // last trade long ago
  if (url.pathname.startsWith("/coinbase/products/")) return send(404, { message: "NotFound" });
  if (url.pathname === "/kraken/0/public/Ticker" && url.searchParams.get("pair") === "XBTUSD") {
    return send(200, { error: [], result: { XXBTZUSD: { a: ["97001.0", "1", "1.000"], b: ["96999.0", "1", "1.000"], c: ["97000.5", "0.1"] } } });
  }
  send(404, { error: ["EQuery:Unknown asset pair"] });
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 30_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("oracle.alert-generator: persisted price alerts evaluated on the server's schedule", function () {
  this.timeout(120_000);
  let up: UpstreamSetup;
  let srv: TestServer;

  before(async () => {
    up = await withUpstream(venues, (base) => ({
      MARKET_COINBASE_URL: `${base}/coinbase`,
      MARKET_KRAKEN_URL: `${base}/kraken`,
      MARKET_BINANCE_URL: `${base}/binance`,
      ALERT_EVAL_INTERVAL_SECONDS: "0.2",
      ALERT_MAX_PER_PAYER: "3",
      BREAKER_FAILURE_THRESHOLD: "1000",
    }));
    srv = up.srv;
  });
  after(async () => {
    // Alerts outlive the server in this run's shared database: expire them, so no later test server's
    // scheduler evaluates them against its own venues.
    await srv?.ds.createQueryBuilder().update(PriceAlertEntity).set({ expireTime: new Date() }).where("1 = 1").execute();
    await up?.close();
  });

  const payer = (b: Buyer) => wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(b.account)));
  const call = async (b: Buyer, body: unknown) => {
    const res = await payer(b)(`${srv.url}/v1/services/oracle.alert-generator`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /** A funded buyer whose wallet controls an ERC-8004 identity linked to a registered agent. */
  const onboardedBuyer = async () => {
    const b = await newBuyer(srv);
    await onboard(srv, b, await registerAgent(srv, { evm_address: b.address }));
    return b;
  };
  const stateOf = (alertId: string) => srv.ds.manager.findOneByOrFail(PriceAlertEntity, { alertId });

  it("creates an alert with its first evaluation; the schedule fires it when the price crosses; the owner reads state and history", async () => {
    const buyer = await onboardedBuyer();
    const before = await usdcBalance(srv, buyer.address);
    market.btc = "97000.00";
    const created = await call(buyer, { pair: "btc-usd", condition: "above", threshold: "98000", max_data_age_seconds: 60 });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const a = created.body.deliverable;
    expect(a.alert_id).to.match(/^alert_[0-9a-z]{20}$/);
    expect(a).to.include({ owner: buyer.address, pair: "BTC-USD", venue: "coinbase", condition: "above", threshold: "98000", state: "armed", fired_at: null, evaluations: 1, evaluation_interval_seconds: 0.2, evaluating: true, request: "created" });
    expect(a.last_evaluation).to.include({ price: "97000.00", error: null });
    expect(a.last_evaluation.source.endpoint).to.match(/\/coinbase\/products\/BTC-USD\/ticker$/);
    expect(a.history).to.have.length(1);
    expect(a.history[0]).to.include({ evaluation: 1, state: "armed", price: "97000.00" });
    expect(a.history[0].note).to.contain("below the threshold 98000");
    expect(Date.parse(a.expires_at) - Date.parse(a.created_at)).to.equal(168 * 3_600_000);

    market.btc = "98500.50";
    const fired = await until("the alert to fire", async () => {
      const row = await stateOf(a.alert_id);
      return row.state === "fired" ? row : undefined;
    });
    expect(fired.firedPrice).to.equal("98500.50");

    const read = await call(buyer, { alert_id: a.alert_id });
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    const r = read.body.deliverable;
    expect(AlertGeneratorOutput.safeParse(r).error).to.equal(undefined); // the published x-output-schema holds
    expect(AlertGeneratorOutput.safeParse(a).error).to.equal(undefined);
    expect(r).to.include({ alert_id: a.alert_id, state: "fired", fired_price: "98500.50", evaluating: false, request: "lookup" });
    expect(Date.parse(r.fired_at)).to.be.at.least(Date.parse(a.created_at));
    expect(r.evaluations).to.be.at.least(2);
    expect(r.history.map((h: Json) => h.state)).to.deep.equal(["armed", "fired"]);
    expect(r.history[1]).to.include({ price: "98500.50" });
    expect(r.history[1].note).to.contain("at or above the threshold 98000");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 2n * PRICE);

    // below: met at once, so the first evaluation fires it; pct-move: measured from the first read.
    const below = await call(buyer, { pair: "BTC-USD", condition: "below", threshold: 99_000 });
    expect(below.body.deliverable).to.include({ state: "fired", fired_price: "98500.50", threshold: "99000" });
    const move = await call(buyer, { pair: "BTC-USD", condition: "pct-move", threshold: "1" });
    expect(move.body.deliverable).to.include({ state: "armed", reference_price: "98500.50" });
    market.btc = "97400.00"; // -1.1173%
    await until("the pct-move alert to fire", async () => ((await stateOf(move.body.deliverable.alert_id)).state === "fired" ? true : undefined));
    const moved = await call(buyer, { alert_id: move.body.deliverable.alert_id });
    expect(moved.body.deliverable.history[1].note).to.contain("moved 1.1173% from the reference 98500.50");

    // Kraken gives no quote time: the read time stands for the data's time.
    const kraken = await call(buyer, { pair: "BTC-USD", venue: "kraken", condition: "below", threshold: "90000" });
    expect(kraken.body.deliverable).to.include({ venue: "kraken", state: "armed" });
    expect(kraken.body.deliverable.last_evaluation).to.include({ price: "97000.5", data_age_seconds: 0 });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 6n * PRICE);
    await expectLedgerConsistent(srv.ds);
  });

  it("goes stale when the venue stops answering or its data is too old, and re-arms when fresh data returns", async () => {
    const buyer = await onboardedBuyer();
    market.ethDown = false;
    const created = await call(buyer, { pair: "ETH-USD", condition: "above", threshold: "5000", max_data_age_seconds: 1 });
    expect(created.body.deliverable.state).to.equal("armed");
    const id = created.body.deliverable.alert_id;

    market.ethDown = true;
    try {
      await until("the alert to go stale", async () => ((await stateOf(id)).state === "stale" ? true : undefined));
      const read = await call(buyer, { alert_id: id });
      const r = read.body.deliverable;
      expect(r.state).to.equal("stale");
      expect(r.last_evaluation.error).to.contain("503");
      expect(r.last_evaluation.price).to.equal("3000.00"); // the last good read stays visible
      expect(r.history.at(-1).state).to.equal("stale");
      expect(r.history.at(-1).note).to.contain("the venue is failing");
    } finally {
      market.ethDown = false;
    }
    await until("the alert to re-arm", async () => ((await stateOf(id)).state === "armed" ? true : undefined));
    const back = await call(buyer, { alert_id: id });
    expect(back.body.deliverable.history.map((h: Json) => h.state)).to.deep.equal(["armed", "stale", "armed"]);
    expect(back.body.deliverable.last_evaluation.error).to.equal(null);

    // A quote whose venue time is older than the max age is stale from the first evaluation.
    const old = await call(buyer, { pair: "SOL-USD", condition: "below", threshold: "100", max_data_age_seconds: 300 });
    expect(old.body.deliverable.state).to.equal("stale");
    expect(old.body.deliverable.history[0].note).to.match(/the data is \d+ s old, more than the 300 s allowed/);
  });

  it("lets only the creating wallet read an alert, refuses unknown ids and over-limit creation, all without a charge", async () => {
    const owner = await onboardedBuyer();
    const created = await call(owner, { pair: "BTC-USD", condition: "above", threshold: "1000000" });
    const id = created.body.deliverable.alert_id;

    const stranger = await onboardedBuyer();
    const strangerBefore = await usdcBalance(srv, stranger.address);
    const refused = await call(stranger, { alert_id: id });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal("not_a_party");
    const unknown = await call(stranger, { alert_id: "alert_00000000000000000000" });
    expect(unknown.body).to.include({ status: "insufficient_subject", charged: false });
    expect(await usdcBalance(srv, stranger.address)).to.equal(strangerBefore);

    const ownerBefore = await usdcBalance(srv, owner.address);
    for (let i = 0; i < 2; i++) expect((await call(owner, { pair: "BTC-USD", condition: "above", threshold: "1000000" })).status).to.equal(200);
    const over = await call(owner, { pair: "BTC-USD", condition: "above", threshold: "1000000" });
    expect(over.status).to.equal(409);
    expect(over.body.error.code).to.equal("alert_limit_reached");
    expect(await usdcBalance(srv, owner.address)).to.equal(ownerBefore - 2n * PRICE);

    // A venue that cannot quote the pair fails creation: nothing stored, nothing charged.
    const stranger2Before = await usdcBalance(srv, stranger.address);
    const bad = await call(stranger, { pair: "FOO-USD", condition: "above", threshold: "1" });
    expect(bad.status).to.equal(503);
    expect(await usdcBalance(srv, stranger.address)).to.equal(stranger2Before);
  });

  it("refuses a payer without an ERC-8004 identity before any charge", async () => {
    const newcomer = await newBuyer(srv);
    const before = await usdcBalance(srv, newcomer.address);
    const res = await call(newcomer, { pair: "BTC-USD", condition: "above", threshold: "98000" });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal("onboarding_required");
    expect(await usdcBalance(srv, newcomer.address)).to.equal(before);
  });

  it("refuses bad input before any challenge", async () => {
    const cases: [unknown, string][] = [
      [{}, "pair"],
      [{ pair: "BTC-USD", condition: "above" }, "threshold"],
      [{ pair: "BTC-USD", condition: "sideways", threshold: "1" }, "condition"],
      [{ pair: "BTC-USD", condition: "above", threshold: "-5" }, "threshold"],
      [{ pair: "BTC-USD", condition: "above", threshold: "0" }, "threshold"],
      [{ pair: "BTC-USD", condition: "pct-move", threshold: "5000" }, "threshold"],
      [{ pair: "BTC-USD", condition: "above", threshold: "1", venue: "ftx" }, "venue"],
      [{ pair: "BTC-USD", condition: "above", threshold: "1", max_data_age_seconds: 0 }, "max_data_age_seconds"],
      [{ alert_id: "nope" }, "alert_id"],
      [{ alert_id: "alert_00000000000000000000", pair: "BTC-USD" }, "pair"],
    ];
    for (const [body, field] of cases) {
      const res = await fetch(`${srv.url}/v1/services/oracle.alert-generator`, { method: "POST", headers: json, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.headers.get("payment-required")).to.equal(null);
      expect(JSON.stringify(await res.json()), JSON.stringify(body)).to.contain(field);
    }
  });
});

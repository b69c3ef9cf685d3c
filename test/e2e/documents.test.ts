import { expect } from "chai";
import { startTestServer, type TestServer } from "../fixtures/test-server.js";

describe("public documents: rules, OpenAPI, agent card", () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  const json = async (path: string) => {
    const res = await fetch(`${srv.url}${path}`);
    expect(res.status, path).to.equal(200);
    return (await res.json()) as Record<string, any>;
  };

  it("serves every key of the rules document with the spec's values", async () => {
    const rules = await json("/v1/rules");
    expect(rules).to.include.all.keys("rules_version", "fees", "reputation", "bid_scoring", "badge_gates", "witness_program", "terms", "links", "generated_at", "unavailable");
    expect(rules.rules_version).to.equal("2026-09-26");
    expect(rules.terms.version).to.equal("2026-09-26");
    expect(rules.fees).to.include({ mode: "shadow", service_rate_bps: 2000, floor_bps: 1000, ceiling_bps: 2500, unregistered_requester_bps: 300, unregistered_provider_bps: 200, first_time_pair_bps: 100, volume_discount: false, internal_identities_discounted: false });
    expect(rules.fees.provider_badge_adjustment_bps).to.deep.equal({ gold: -400, silver: -200, bronze: -100, none: 0 });
    expect(rules.fees.requester_badge_adjustment_bps).to.deep.equal({ gold: -200, silver: -100, bronze: -50, none: 0 });
    expect(rules.fees.repeat_pair).to.deep.equal([{ threshold: 2, adjustment_bps: -100 }, { threshold: 5, adjustment_bps: -200 }, { threshold: 10, adjustment_bps: -300 }]);
    expect(rules.fees.buyer_tenure_days).to.deep.equal([{ threshold: 30, adjustment_bps: -100 }, { threshold: 90, adjustment_bps: -200 }]);
    expect(rules.bid_scoring).to.include({ reputation: 0.45, price: 0.3, speed: 0.15, match: 0.1 });
    expect(rules.reputation.components.map((c: { name: string; max: number }) => [c.name, c.max])).to.deep.equal([["volume", 30], ["quality", 40], ["diversity", 15], ["chain_depth", 15]]);
    expect(rules.reputation.total_cap).to.equal(100);
    expect(rules.reputation.refresh_interval_seconds).to.equal(900);
    expect(rules.reputation.badges.map((b: { badge: string; min_score: number }) => [b.badge, b.min_score])).to.deep.equal([["gold", 85], ["silver", 70], ["bronze", 50], ["registered", 0], ["none", 0]]);
    expect(rules.witness_program).to.include({ mode: "advisory", enabled: true, seats_per_job: 2, seat_window_hours: 168, daily_credit_cap: 5, min_reason_length: 40, credit_quality: 0.6, jobs_to_bronze: 12, score_ceiling: 62 });
    expect(rules.witness_program.ladder).to.deep.equal([
      { witnessed_jobs: 1, score: 37 }, { witnessed_jobs: 5, score: 44.9 }, { witnessed_jobs: 11, score: 49.9 },
      { witnessed_jobs: 12, score: 50.5 }, { witnessed_jobs: 20, score: 54 }, { witnessed_jobs: 63, score: 62 },
    ]);
    expect(rules.badge_gates.required_badge).to.equal("gold");
    expect(rules.terms.excluded_jurisdictions).to.deep.equal(["CN"]);
    expect(new Date(rules.generated_at).getTime()).to.be.closeTo(Date.now(), 60_000);
  });

  it("lists in `unavailable` every rule section whose engine does not run here", async () => {
    const rules = await json("/v1/rules");
    expect(rules.unavailable).to.deep.equal(["badge_gates"]);
  });

  it("serves an OpenAPI 3.1 document (version 1.0.0) describing every REST route", async () => {
    const doc = await json("/v1/openapi.json");
    expect(doc.openapi).to.equal("3.1.0");
    expect(doc.info.version).to.equal("1.0.0");
    expect(doc.servers[0].url).to.equal(srv.url.replace("127.0.0.1", "127.0.0.1"));
    for (const [path, method] of [["/v1/services", "get"], ["/v1/services/{sku_id}", "post"], ["/a2a/requests", "post"], ["/a2a/requests/{request_id}/bids", "post"], ["/v1/wallet/balance", "get"]]) {
      expect(doc.paths[path!], path).to.have.property(method!);
    }
    expect(doc.paths["/a2a/requests"]).to.not.have.property("get");
    const sku = doc.components.schemas["svc.catalog.v1.Sku"].properties;
    expect(sku).to.include.keys("x-price-usd", "x-payment", "summary");
    expect(sku).to.not.have.property("price_usd");
    const request = doc.components.schemas["svc.marketplace.v1.CreateRequestRequest"].properties;
    expect(request.budget_usd).to.include({ type: "number" });
    expect(doc.paths["/v1/agents/register"].post.responses).to.have.property("201");
    expect(doc.paths["/a2a/requests"].post.security).to.deep.equal([{ bearer: [], starterCreditNote: [] }]);
  });

  it("serves the A2A agent card: protocol 0.3.0, card 2.1.0, no streaming, no push, history kept", async () => {
    const card = await json("/.well-known/agent-card.json");
    expect(card).to.include({ protocolVersion: "0.3.0", version: "2.1.0", preferredTransport: "JSONRPC" });
    expect(card.capabilities).to.include({ streaming: false, pushNotifications: false, stateTransitionHistory: true });
    expect(card.capabilities.extensions.map((e: { uri: string; required: boolean }) => [e.uri, e.required])).to.deep.equal([["https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2", true]]);
    expect(card.skills.map((s: { id: string }) => s.id)).to.include.members(["oracle", "security", "research", "agent", "procurement"]);
    for (const skill of card.skills) expect(skill).to.include.all.keys("id", "name", "description", "tags");
    expect(card.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/a2a\/jsonrpc$/);
    expect(await json("/.well-known/agent.json")).to.deep.equal(card);
  });
});

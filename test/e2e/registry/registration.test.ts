import { expect } from "chai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { AgentEntity } from "../../../src/registry/agent.entity.js";
import { checkJournal } from "../../../src/ledger/ledger.js";
import { renderPassport } from "../../../src/registry/passport-html.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer } from "../../fixtures/buyer.js";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { bearer, registerAgent } from "../../fixtures/agents.js";

const json = { "content-type": "application/json" };

describe("agent registry", function () {
  this.timeout(60_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ STARTER_CREDIT_USD: "0.75" });
  });
  after(() => srv.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = json) => fetch(`${srv.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });

  it("registers an agent: 201, agent_ id, observer tier, a key shown once and stored only as a digest, a funded note", async () => {
    const res = await post("/v1/agents/register", { name: "Research-Bot.1", capabilities: ["research", "analysis"] });
    expect(res.status).to.equal(201);
    const body = (await res.json()) as Record<string, any>;
    expect(body.agent.agent_id).to.match(/^agent_[a-z0-9]{12}$/);
    expect(body.agent).to.include({ name: "Research-Bot.1", tier: "observer" });
    expect(body.api_key).to.match(/^svck_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(body.starter_credit).to.include({ budget_usd: 0.75, remaining_usd: 0.75 });
    expect(body.starter_credit.note).to.match(/^svcn_/);
    const row = await srv.ds.manager.findOneByOrFail(AgentEntity, { agentId: body.agent.agent_id });
    // The secret is everything after `svck_<id>_` (it may itself contain "_").
    expect(JSON.stringify(row)).to.not.contain(/^svck_[a-z0-9]{12}_(.+)$/.exec(body.api_key)![1]);
    expect(await checkJournal(srv.ds.manager)).to.deep.equal([]);
  });

  it("refuses a taken name case-insensitively, invalid names and reserved names", async () => {
    const a = await registerAgent(srv);
    const taken = await post("/v1/agents/register", { name: a.name.toUpperCase() });
    expect(taken.status).to.equal(409);
    expect(await taken.json()).to.have.nested.property("error.code", "name_taken");
    for (const name of ["ab", "x".repeat(33), "<script>alert(1)</script>", "bad name", "-lead", "trail.", "émile"]) {
      const res = await post("/v1/agents/register", { name });
      expect(res.status, name).to.equal(400);
      expect(await res.json(), name).to.have.nested.property("error.code", "invalid_name");
    }
    for (const name of ["svc", "Admin", "svc-auditor", "svc-anything", "agent_abc"]) {
      const res = await post("/v1/agents/register", { name });
      expect(res.status, name).to.equal(400);
      expect(await res.json(), name).to.have.nested.property("error.code", "name_reserved");
    }
    expect((await post("/v1/agents/register", {})).status).to.equal(400);
  });

  it("lets exactly one of 20 concurrent registrations of one name win", async () => {
    const name = `race-${Date.now().toString(36)}`;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post("/v1/agents/register", { name: i % 2 ? name : name.toUpperCase() })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(19);
    expect(await srv.ds.manager.countBy(AgentEntity, { nameKey: name })).to.equal(1);
    expect(await checkJournal(srv.ds.manager)).to.deep.equal([]);
  });

  it("checks capabilities and the optional evm_address at registration", async () => {
    expect((await post("/v1/agents/register", { name: `caps-${Date.now()}`, capabilities: ["ok", "not ok!"] })).status).to.equal(400);
    expect((await post("/v1/agents/register", { name: `caps2-${Date.now()}`, evm_address: "0x123" })).status).to.equal(400);
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const ok = await registerAgent(srv, { evm_address: wallet.toLowerCase() });
    const passport = await fetch(`${srv.url}/a2a/passport/${ok.agent_id}`);
    expect(await passport.text()).to.contain(wallet);
  });

  it("serves the passport as escaped HTML by id or name, case-insensitively, and 404 for unknown agents", async () => {
    const a = await registerAgent(srv, { capabilities: ["research"] });
    for (const ref of [a.agent_id, a.name, a.name.toUpperCase()]) {
      const res = await fetch(`${srv.url}/a2a/passport/${ref}`);
      expect(res.status, ref).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^text\/html/);
      expect(res.headers.get("content-security-policy")).to.contain("default-src 'none'");
      expect(await res.text()).to.contain(`<h1>${a.name}</h1>`);
    }
    const missing = await fetch(`${srv.url}/a2a/passport/nobody-${Date.now()}`);
    expect(missing.status).to.equal(404);
    expect(await missing.json()).to.have.nested.property("error.code", "not_registered");
  });

  it("escapes hostile agent-supplied text in the passport renderer", () => {
    const html = renderPassport({ agent: { name: `<img src=x onerror=alert(1)>"'&`, capabilities: ["<script>x</script>"], agent_id: "a" }, badge: "none" });
    expect(html).to.not.contain("<img");
    expect(html).to.not.contain("<script>x");
    expect(html).to.contain("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
  });

  it("serves reputation in the zero state, instructions with the kit block, and the ERC-8004 registration file", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const a = await registerAgent(srv, { evm_address: wallet });
    const rep = (await (await fetch(`${srv.url}/a2a/agents/${a.name}/reputation`)).json()) as Record<string, unknown>;
    expect(rep).to.include({ agent_id: a.agent_id, found: true, score: 0, badge: "none" });
    const ins = (await (await fetch(`${srv.url}/a2a/agents/${a.name}/instructions`)).json()) as Record<string, any>;
    expect(ins.kit).to.include({ kit_version: "2026.09.07", min_kit_version: "2026.09.03" });
    const reg = (await (await fetch(`${srv.url}/a2a/agents/${a.agent_id}/registration.json`)).json()) as Record<string, any>;
    expect(reg).to.include({ type: "https://eips.ethereum.org/EIPS/eip-8004#registration-v1", name: a.name, x402Support: true, active: true });
    expect(reg.agentWallet).to.equal(`eip155:84532:${wallet}`);
    expect(reg.services.map((s: { name: string }) => s.name)).to.include.members(["web", "A2A", "agentWallet"]);
    expect(reg.registrations).to.deep.equal([]);
    expect((await fetch(`${srv.url}/a2a/agents/nobody-${Date.now()}/reputation`)).status).to.equal(404);
  });

  it("reputation.lookup, paid, finds a registered agent with no provider history: found, score 0, badge none", async () => {
    const a = await registerAgent(srv);
    const buyer = await newBuyer(srv);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const res = await pay(`${srv.url}/v1/services/reputation.lookup`, { method: "POST", headers: json, body: JSON.stringify({ task: `agent_id: ${a.name}` }) });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { deliverable: Record<string, unknown>; charged: boolean };
    expect(body.charged).to.equal(true);
    expect(body.deliverable).to.include({ agent_id: a.agent_id, found: true, score: 0, badge: "none" });
  });

  it("reports a note's balance; refuses an API key, a forged note and a missing note", async () => {
    const a = await registerAgent(srv);
    const balance = await fetch(`${srv.url}/v1/wallet/balance`, { headers: { "x-402-payment": a.note } });
    expect(await balance.json()).to.deep.equal({ status: "active", budget_usd: 0.75, remaining_usd: 0.75, escrowed_usd: 0 });
    const key = await fetch(`${srv.url}/v1/wallet/balance`, { headers: { "x-402-payment": a.api_key } });
    expect(key.status).to.equal(400);
    expect(await key.json()).to.have.nested.property("error.code", "not_a_note");
    const bearerNote = await fetch(`${srv.url}/v1/wallet/balance`, { headers: { "x-402-payment": `Bearer ${a.api_key}` } });
    expect(bearerNote.status).to.equal(400);
    const forged = a.note.slice(0, -1) + (a.note.endsWith("A") ? "B" : "A"); // always differs from the real note
    expect((await fetch(`${srv.url}/v1/wallet/balance`, { headers: { "x-402-payment": forged } })).status).to.equal(401);
    expect((await fetch(`${srv.url}/v1/wallet/balance`)).status).to.equal(401);
    expect((await fetch(`${srv.url}/v1/wallet/balance`, { headers: bearer(a.api_key) })).status).to.equal(401);
  });
});

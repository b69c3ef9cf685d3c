import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { recordProof } from "../../../src/proof/proof-recorder.js";
import { ProofSigner, verifyProofSignature } from "../../../src/proof/proof-signer.js";
import { AgentEntity } from "../../../src/registry/agent.entity.js";
import { DueDiligenceOutput } from "../../../src/skus/ops-due-diligence-scan.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { onboard } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { pollResult } from "../../fixtures/results.js";
import { callPaid, expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";

const SKU = "ops.due-diligence-scan";
const PRICE = 1_000_000n;
const DAY_MS = 86_400_000;
const OPERATOR = "operator-key-for-due-diligence-tests";

const NEXT_YEAR = new Date(Date.now() + 365 * DAY_MS).toISOString();
const CARD = {
  protocolVersion: "0.3.0",
  name: "Acme Procurement Agent",
  description: "Buys things for Acme",
  url: "https://acme.example/a2a",
  preferredTransport: "JSONRPC",
  version: "1.0.0",
  capabilities: { streaming: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "buy", name: "Buy", description: "Buys things", tags: ["procurement"] }],
};

// The company's web server.
const site: http.RequestListener = (req, res) => {
  if (req.url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end("<html><body><h1>Acme</h1></body></html>");
  if (req.url === "/.well-known/security.txt") return void res.writeHead(200, { "content-type": "text/plain" }).end(`Contact: mailto:security@acme.example\nExpires: ${NEXT_YEAR}\nPreferred-Languages: en\n`);
  if (req.url === "/.well-known/agent-card.json") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(CARD));
  res.writeHead(404).end();
};

describe("ops.due-diligence-scan: automated pre-screen of a counterparty (async)", function () {
  this.timeout(180_000);
  // A port nothing listens on, allowlisted too: an unreachable company domain.
  let closedPort = 0;
  before(async () => {
    const s = http.createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    closedPort = (s.address() as AddressInfo).port;
    await new Promise<void>((r) => s.close(() => r()));
  });
  const up = upstreamForSuite(site, (base) => ({ SAFE_FETCH_ALLOW: `${new URL(base).host},127.0.0.1:${closedPort}`, OPERATOR_API_KEY: OPERATOR }));
  let buyer: Buyer;
  let subjectWallet: Buyer;
  let agent: RegisteredAgent;
  before(async () => {
    buyer = await newBuyer(up.srv, 20);
    subjectWallet = await newBuyer(up.srv);
    agent = await registerAgent(up.srv, { evm_address: subjectWallet.address });
    await onboard(up.srv, subjectWallet, agent);
  });

  const order = async (body: unknown) => {
    const res = await callPaid(up.srv, buyer, SKU, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const done = await pollResult(up.srv, res.body.job_id);
    expect(done.status, JSON.stringify(done)).to.equal("delivered");
    expect(DueDiligenceOutput.safeParse(done.deliverable).error).to.equal(undefined);
    return done.deliverable;
  };
  const results = (d: Json) => Object.fromEntries(d.checks.map((c: Json) => [c.id, c.result]));
  const key = () => ({ hmacKey: up.srv.config.proofHmacKey, isDevelopmentKey: true, signer: ProofSigner.fromFile(up.srv.config.proofSigningKeyFile) });
  const dispute = (provider: string, verdict: string, n: string) =>
    recordProof(up.srv.ds.manager, key(), { kind: 30129, settlementRef: `dispute-${n}`, taskClass: "arbitration", ts: new Date(), body: { dispute_id: `dsp_${n}`, job_id: `job_${n}`, provider, verdict } });

  it("screens a registered agent with history: each check with evidence and source; a new agent with an upheld dispute is `review`; signed; list price charged", async () => {
    // History: a paid call settled by the agent's wallet, an audit report about it, one dispute upheld against it.
    expect((await callPaid(up.srv, subjectWallet, "agent.trust-badge", { subject: subjectWallet.address })).status).to.equal(200);
    const report = await recordProof(up.srv.ds.manager, key(), { kind: 30105, settlementRef: `audit-${agent.agent_id}`, taskClass: "security", ts: new Date(), body: { target: agent.name, score: 7 } });
    await dispute(agent.agent_id, "upheld", `a-${agent.agent_id}`);

    const start = await usdcBalance(up.srv, buyer.address);
    const d = await order({ subject: agent.name });
    expect(await usdcBalance(up.srv, buyer.address)).to.equal(start - PRICE);

    expect(d.subject).to.deep.equal({ agent: { agent_id: agent.agent_id, name: agent.name, matched_by: "name" }, company: null });
    expect(results(d)).to.deep.equal({
      "registry.passport": "warn",
      "identity.erc8004": "pass",
      "disputes.adjudicated": "warn",
      "marketplace.delivery": "warn",
      "reputation.badge": "warn",
      "settlement.payments": "pass",
      "audits.reports": "pass",
    });
    expect(d).to.include({ screen_result: "review" });
    expect(d.summary).to.deep.equal({ pass: 3, warn: 4, fail: 0 });
    const check = (id: string) => d.checks.find((c: Json) => c.id === id);
    expect(check("registry.passport").evidence).to.contain("newer than 7 days");
    expect(check("identity.erc8004").evidence).to.match(/^verified: token \d+ is still owned by/);
    expect(check("identity.erc8004").source.name).to.equal("ERC-8004 Identity Registry");
    expect(check("disputes.adjudicated").evidence).to.equal("1 dispute(s) adjudicated: 1 upheld against the agent, 0 overturned, 0 withdrawn");
    expect(check("disputes.adjudicated").source.name).to.equal("proof rail (kind 30129)");
    expect(check("settlement.payments").evidence).to.contain("1 payment(s) settled (0.01 USD)");
    expect(check("audits.reports").evidence).to.contain(report.proofId);
    expect(check("marketplace.delivery").weight).to.equal("core");
    expect(d.not_checked.map((n: Json) => n.id)).to.deep.equal(["domain.tls", "domain.reachable", "domain.security_txt", "domain.a2a_card"]);
    expect(d.scope).to.contain("does not research beyond that");

    const keys = (await (await fetch(`${up.srv.url}/v1/proofs/keys`)).json()) as Json;
    const { signature, ...unsigned } = d;
    expect(verifyProofSignature(keys.ed25519_public_keys[0], canonicalJson(unsigned), signature.value)).to.equal(true);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("a registered agent with an established record is `clear`; two upheld disputes make any agent `high_risk`", async () => {
    const providerWallet = await newBuyer(up.srv, 1);
    const provider = await registerAgent(up.srv, { evm_address: providerWallet.address });
    const requester = await registerAgent(up.srv);
    // One marketplace job delivered by the provider and paid out (the payout refreshes its reputation).
    const post = async (path: string, body: unknown, headers: Record<string, string>) => (await (await fetch(`${up.srv.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) })).json()) as Json;
    const request = await post("/a2a/requests", { capability_id: "research", task_description: "summarize the x402 spec", budget_usd: 0.02 }, { ...bearer(requester.api_key), "x-402-payment": requester.note });
    const bid = await post(`/a2a/requests/${request.request_id}/bids`, { capability_id: "research", agent_name: provider.name, display_name: "offer" }, bearer(provider.api_key));
    const job = await post(`/a2a/bids/${bid.bid_id}/accept`, {}, bearer(requester.api_key));
    const completed = await post(`/a2a/jobs/${job.job_id}/complete`, { result_summary: "the spec in 5 bullets" }, bearer(provider.api_key));
    expect(completed.state).to.equal("completed");
    expect((await post(`/v1/admin/payouts/${completed.payout.payout_id}/release`, {}, bearer(OPERATOR))).payout.state).to.equal("released");
    // Registered a month ago, identity linked and still held.
    await onboard(up.srv, providerWallet, provider);
    await up.srv.ds.manager.update(AgentEntity, { agentId: provider.agent_id }, { createTime: new Date(Date.now() - 30 * DAY_MS) });

    const d = await order({ subject: provider.agent_id });
    expect(d.subject.agent.matched_by).to.equal("agent_id");
    expect(results(d)["marketplace.delivery"]).to.equal("pass");
    expect(d.checks.find((c: Json) => c.id === "marketplace.delivery").evidence).to.equal("1 job(s) completed and 0 failed as provider (0% failed)");
    expect(results(d)["registry.passport"]).to.equal("pass");
    expect(d.checks.filter((c: Json) => c.weight === "core").map((c: Json) => c.result)).to.not.include("warn");
    expect(d.screen_result).to.equal("clear");

    await dispute(provider.agent_id, "upheld", `b1-${provider.agent_id}`);
    await dispute(provider.name, "upheld", `b2-${provider.agent_id}`);
    const after = await order({ subject: provider.name });
    expect(results(after)["disputes.adjudicated"]).to.equal("fail");
    expect(after.screen_result).to.equal("high_risk");
  });

  it("checks a company's domain (TLS, reachability, security.txt, A2A card) through the safe fetcher; http fails TLS; an unreachable domain fails", async () => {
    const d = await order({ company: { name: "Acme Corp", domain: up.base } });
    expect(d.subject).to.deep.equal({ agent: null, company: { name: "Acme Corp", domain: new URL(up.base).host } });
    expect(results(d)).to.deep.equal({ "domain.tls": "fail", "domain.reachable": "pass", "domain.security_txt": "pass", "domain.a2a_card": "pass" });
    const check = (id: string) => d.checks.find((c: Json) => c.id === id);
    expect(check("domain.tls").evidence).to.contain("plain http");
    expect(check("domain.security_txt").evidence).to.contain("mailto:security@acme.example");
    expect(check("domain.a2a_card").evidence).to.equal('card "Acme Procurement Agent" validates as A2A agent card 0.3');
    expect(check("domain.a2a_card").source.endpoint).to.equal(`${up.base}/.well-known/agent-card.json`);
    expect(d.screen_result).to.equal("high_risk");
    expect(d.not_checked.map((n: Json) => n.id)).to.include("registry.passport");

    const down = await order({ domain: `http://127.0.0.1:${closedPort}`, subject: agent.agent_id });
    expect(results(down)["domain.reachable"]).to.equal("fail");
    expect(down.checks.find((c: Json) => c.id === "domain.reachable").evidence).to.contain("did not answer");
    expect(results(down)["registry.passport"]).to.equal("warn");
    expect(down.screen_result).to.equal("high_risk");
  });

  it("an unresolvable subject is insufficient_subject: no challenge, nothing charged (an unregistered agent, a company given only by name)", async () => {
    const start = await usdcBalance(up.srv, buyer.address);
    for (const body of [{ subject: "nobody-registered-here" }, { company: { name: "Acme Corp" } }, { subject: "nobody-registered-here", domain: up.base }, { subject: buyer.address }]) {
      const res = await up.unpaid(SKU, body);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(res.challenged).to.equal(false);
      expect(res.body, JSON.stringify(body)).to.include({ status: "insufficient_subject", charged: false });
    }
    expect((await up.unpaid(SKU, { company: { name: "Acme Corp" } })).body.reason).to.contain("does not research beyond what it can check");
    expect(await usdcBalance(up.srv, buyer.address)).to.equal(start);
  });

  it("refuses bad input and private domains with 400 before any challenge", async () => {
    await expectBadInputRefused({ srv: up.srv, buyer }, SKU, [
      [{}, "subject"],
      [{ domain: "http://10.0.0.1" }, "domain"],
      [{ company: { name: "Internal", domain: "192.168.1.1" } }, "company.domain"],
      [{ domain: "not a host name!" }, "domain"],
      [{ subject: { name: "" } }, "subject.name"],
    ]);
  });
});

import { expect } from "chai";
import http from "node:http";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { IDENTITY_REGISTRY } from "../../../src/chain/artifacts.js";
import { IntroductionEntity } from "../../../src/social/introduction.entity.js";
import { IntroductionOutput } from "../../../src/skus/social-verified-introduction.js";
import type { TestServer } from "../../fixtures/test-server.js";
import { withUpstream, type UpstreamSetup } from "../../fixtures/upstream.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { onboard, REGISTRY, walletClient } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

type Json = Record<string, any>;
const json = { "content-type": "application/json" };

// Both introduced agents' webhook receivers, on loopback.
const delivered: { path: string; type: string; body: Json }[] = [];
const receivers: http.RequestListener = async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  delivered.push({ path: req.url!, type: String(req.headers["svc-event-type"]), body: JSON.parse(body || "{}") as Json });
  res.writeHead(204).end();
};

async function until<T>(fn: () => T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("social.verified_introduction: delegation chain and identities verified, both agents notified, the introduction recorded", function () {
  this.timeout(120_000);
  let up: UpstreamSetup;
  let srv: TestServer;
  let base: string;
  let buyer: Buyer;
  let introducer: RegisteredAgent;
  let a: RegisteredAgent;
  let b: RegisteredAgent;
  before(async () => {
    up = await withUpstream(receivers, () => ({ WEBHOOK_BACKOFF_BASE_MS: "100" }));
    ({ srv, base, buyer } = up);
    introducer = await registerAgent(srv, { evm_address: buyer.address });
    await onboard(srv, buyer, introducer);
    a = await withCallback(await registerAgent(srv), "/hooks/a", []);
    b = await withCallback(await registerAgent(srv), "/hooks/b", ["introduction.received"]);
  });
  after(() => up.close());

  async function withCallback(agent: RegisteredAgent, path: string, events: string[]): Promise<RegisteredAgent> {
    const res = await fetch(`${srv.url}/a2a/agents/${agent.agent_id}/callback`, { method: "POST", headers: bearer(agent.api_key), body: JSON.stringify({ callback_url: `${base}${path}`, events }) });
    expect(res.status, await res.clone().text()).to.equal(200);
    return agent;
  }
  const payAs = async (who: Buyer, body: unknown) => {
    const res = await wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(who.account)))(`${srv.url}/v1/services/social.verified_introduction`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const unpaid = async (body: unknown) => {
    const res = await fetch(`${srv.url}/v1/services/social.verified_introduction`, { method: "POST", headers: json, body: JSON.stringify(body) });
    return { status: res.status, challenge: res.headers.get("payment-required"), body: (await res.json()) as Json };
  };

  it("introduces two agents for the list price: the chain wallet -> identity -> introducer verified, both notified by webhook, recorded", async () => {
    const before = await usdcBalance(srv, buyer.address);
    const res = await payAs(buyer, { agents: [a.name, b.agent_id], message: "You both settle USDC on Base; a has spare research capacity.", purpose: "research partnership" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    const d = res.body.deliverable;
    expect(IntroductionOutput.safeParse(d).error).to.equal(undefined);
    expect(d.introducer).to.include({ agent_id: introducer.agent_id, payout_wallet: buyer.address });
    expect(d.introducer.identity.state).to.equal("verified");
    expect(d.delegation_chain.map((l: Json) => [l.from, l.to, l.verified])).to.deep.equal([
      [buyer.address, `eip155:84532:${REGISTRY}:${d.delegation_chain[0].to.split(":").at(-1)}`, true],
      [d.delegation_chain[0].to, introducer.agent_id, true],
      [introducer.agent_id, d.introduction_id, true],
    ]);
    expect(d.agents.map((x: Json) => [x.agent_id, x.identity.state, x.notification.event_type, x.notification.state])).to.deep.equal([
      [a.agent_id, "not_linked", "introduction.received", "queued"],
      [b.agent_id, "not_linked", "introduction.received", "queued"],
    ]);

    const toA = await until(() => delivered.find((e) => e.path === "/hooks/a" && e.type === "introduction.received"));
    const toB = await until(() => delivered.find((e) => e.path === "/hooks/b" && e.type === "introduction.received"));
    expect(toA.body.data).to.deep.include({ introduction_id: d.introduction_id, message: "You both settle USDC on Base; a has spare research capacity.", purpose: "research partnership" });
    expect(toA.body.data.counterpart.agent_id).to.equal(b.agent_id);
    expect(toB.body.data.counterpart.agent_id).to.equal(a.agent_id);
    expect(toB.body.data.introducer).to.deep.equal({ agent_id: introducer.agent_id, name: introducer.name });

    const row = await srv.ds.manager.findOneByOrFail(IntroductionEntity, { introductionId: d.introduction_id });
    expect(row).to.include({ introducerAgentId: introducer.agent_id, agentAId: a.agent_id, agentBId: b.agent_id, payer: buyer.address, eventAId: d.agents[0].notification.event_id, eventBId: d.agents[1].notification.event_id, purpose: "research partnership" });
    expect(JSON.parse(row.delegationJson)).to.have.length(3);
    await expectLedgerConsistent(srv.ds);
  });

  it("charges nothing when an agent cannot be notified, is the same agent twice, or is not registered (insufficient_subject, no challenge)", async () => {
    const silent = await registerAgent(srv);
    const other = await withCallback(await registerAgent(srv), "/hooks/other", ["job.assigned"]);
    for (const [agents, reason] of [
      [[a.name, silent.name], "cannot be notified"],
      [[a.name, other.name], "cannot be notified"],
      [[a.name, a.agent_id], "same agent"],
      [[a.name, "nobody-registered"], "no registered agent"],
    ] as [string[], string][]) {
      const res = await unpaid({ agents, message: "hello" });
      expect(res.status).to.equal(200);
      expect(res.challenge).to.equal(null);
      expect(res.body, reason).to.include({ status: "insufficient_subject", charged: false });
      expect(res.body.reason).to.contain(reason);
    }
  });

  it("refuses, before any charge, a payer that does not control the introducer it names, and one with no onboarded identity", async () => {
    const other = await newBuyer(srv);
    const mine = await registerAgent(srv, { evm_address: other.address });
    await onboard(srv, other, mine);
    const before = await usdcBalance(srv, other.address);
    const res = await payAs(other, { introducer: introducer.name, agents: [a.name, b.name], message: "hello" });
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal("not_a_party");
    expect(await usdcBalance(srv, other.address)).to.equal(before);

    const stranger = await newBuyer(srv);
    const refused = await payAs(stranger, { agents: [a.name, b.name], message: "hello" });
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal("onboarding_required");
    expect(await usdcBalance(srv, stranger.address)).to.equal(5_000_000n);
  });

  it("refuses with 409, uncharged, when an introduced agent's linked identity no longer holds on-chain", async () => {
    const wallet = await newBuyer(srv);
    const moved = await withCallback(await registerAgent(srv, { evm_address: wallet.address }), "/hooks/moved", []);
    const token = await onboard(srv, wallet, moved);
    const hash = await walletClient(srv, wallet).writeContract({ address: REGISTRY, abi: IDENTITY_REGISTRY.abi, functionName: "transferFrom", args: [wallet.address, (await newBuyer(srv)).address, token] });
    await srv.chain.publicClient.waitForTransactionReceipt({ hash });
    const before = await usdcBalance(srv, buyer.address);
    const res = await payAs(buyer, { introducer: introducer.agent_id, agents: [a.name, moved.name], message: "hello" });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal("identity_unverified");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("refuses bad input with 400 naming the field, before any challenge", async () => {
    for (const [body, field] of [
      [{ agents: [a.name], message: "hi" }, "agents"],
      [{ agents: [a.name, b.name] }, "message"],
      [{ agents: [a.name, b.name], message: "" }, "message"],
      [{ agents: [a.name, b.name], message: "x".repeat(2001) }, "message"],
    ] as [unknown, string][]) {
      const res = await unpaid(body);
      expect(res.status, field).to.equal(400);
      expect(res.challenge).to.equal(null);
      expect(JSON.stringify(res.body)).to.contain(field);
    }
  });
});

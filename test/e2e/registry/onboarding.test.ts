import { expect } from "chai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { z } from "zod";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { b64, challengeOf, newBuyer, paidPost, signV2Payment, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { registerAgent } from "../../fixtures/agents.js";
import { IDENTITY_REGISTRY } from "../../../src/chain/artifacts.js";
import { linkIdentity, mintIdentity as mintFor, REGISTRY, signLink, walletClient } from "../../fixtures/identity.js";

const json = { "content-type": "application/json" };

// A state-mutating SKU stands in for the engine of a later issue: it only echoes the alert it was given.
const echoAlert: SkuHandler<{ task: string }> = {
  skuId: "oracle.alert-generator",
  poweredBy: "test-engine",
  input: z.object({ task: z.string() }).loose(),
  output: z.object({ alert: z.string(), state: z.string() }),
  run: async (input) => ({ alert: input.task, state: "armed" }),
};

describe("ERC-8004 onboarding gate", function () {
  this.timeout(60_000);
  let srv: TestServer;
  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    handlers.set(echoAlert.skuId, echoAlert);
    srv = await startTestServer({}, { handlers });
  });
  after(() => srv.close());

  const wallet = (b: Buyer) => walletClient(srv, b);
  const pay = (b: Buyer) =>
    wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(b.account)))(`${srv.url}/v1/services/oracle.alert-generator`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ task: "BTC above 100k" }),
    });

  const mintIdentity = (b: Buyer) => mintFor(srv, b);
  const sign = signLink;
  const link = (agent: { agent_id: string; api_key: string }, onchainAgentId: bigint, signature: string, deadline: bigint) => linkIdentity(srv, agent, onchainAgentId, signature, deadline);

  it("refuses a gated SKU from a payer without a linked identity with 409 before any charge, then serves it once linked", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const refused = await pay(buyer);
    expect(refused.status).to.equal(409);
    expect(await refused.json()).to.have.nested.property("error.code", "onboarding_required");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);

    const agent = await registerAgent(srv, { evm_address: buyer.address });
    const onchainId = await mintIdentity(buyer);
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 600);
    const linked = await link(agent, onchainId, await sign(buyer, agent.agent_id, onchainId, deadline), deadline);
    expect(linked.status, await linked.clone().text()).to.equal(200);
    expect(((await linked.json()) as { agent: { onchain_identity: string } }).agent.onchain_identity).to.equal(`eip155:84532:${REGISTRY}:${onchainId}`);
    const reg = (await (await fetch(`${srv.url}/a2a/agents/${agent.agent_id}/registration.json`)).json()) as { registrations: unknown[] };
    expect(reg.registrations).to.deep.equal([{ agentId: Number(onchainId), agentRegistry: `eip155:84532:${REGISTRY}` }]);

    const paid = await pay(buyer);
    expect(paid.status).to.equal(200);
    expect(((await paid.json()) as { deliverable: unknown }).deliverable).to.deep.equal({ alert: "BTC above 100k", state: "armed" });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 20_000n);

    // Control is re-checked on-chain: after the identity moves to another owner, the gate closes again.
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const hash = await wallet(buyer).writeContract({ address: REGISTRY, abi: IDENTITY_REGISTRY.abi, functionName: "transferFrom", args: [buyer.address, stranger, onchainId] });
    await srv.chain.publicClient.waitForTransactionReceipt({ hash });
    expect((await pay(buyer)).status).to.equal(409);
  });

  it("records each gate firing as an enforcement proof (kind 30014) once per payer and hour, never for a forged payer", async () => {
    const firings = async (subject: string) =>
      (await srv.ds.manager.findBy(ProofRecordEntity, { kind: 30014 })).map((r) => JSON.parse(r.bodyJson) as Record<string, unknown>).filter((b) => b.subject === subject);
    const buyer = await newBuyer(srv);
    expect((await pay(buyer)).status).to.equal(409);
    expect((await pay(buyer)).status).to.equal(409);
    const recorded = await firings(buyer.address);
    expect(recorded).to.have.length(1);
    expect(recorded[0]).to.include({ gate: "erc8004_onboarding", reason: "onboarding_required", sku_id: "oracle.alert-generator", action: "refused", charged: false });

    // An authorization naming a victim's wallet but signed by another key is refused and puts nobody on the rail.
    const victim = await newBuyer(srv);
    const accepted = (await challengeOf(srv, "oracle.alert-generator", { task: "x" })).accepts[0];
    const forged = await signV2Payment(victim, accepted, { signer: buyer.account });
    expect((await paidPost(srv, "oracle.alert-generator", { task: "x" }, b64(forged))).status).to.equal(409);
    expect(await firings(victim.address)).to.have.length(0);
  });

  it("refuses links not signed by the identity's controller, expired or far-off deadlines, and a second agent for one identity", async () => {
    const owner = await newBuyer(srv);
    const other = await newBuyer(srv);
    const a = await registerAgent(srv);
    const b = await registerAgent(srv);
    const onchainId = await mintIdentity(owner);
    const soon = BigInt(Math.floor(Date.now() / 1000) + 600);
    const byOther = await link(a, onchainId, await sign(other, a.agent_id, onchainId, soon), soon);
    expect(byOther.status).to.equal(403);
    expect(await byOther.json()).to.have.nested.property("error.code", "identity_not_controlled");
    const forB = await link(a, onchainId, await sign(owner, b.agent_id, onchainId, soon), soon); // signed for another agent id
    expect(forB.status).to.equal(403);
    const past = BigInt(Math.floor(Date.now() / 1000) - 5);
    expect((await link(a, onchainId, await sign(owner, a.agent_id, onchainId, past), past)).status).to.equal(400);
    const far = BigInt(Math.floor(Date.now() / 1000) + 10 * 24 * 3600);
    expect((await link(a, onchainId, await sign(owner, a.agent_id, onchainId, far), far)).status).to.equal(400);
    expect((await link(a, 999_999n, await sign(owner, a.agent_id, 999_999n, soon), soon)).status).to.equal(404);
    expect((await link(a, onchainId, await sign(owner, a.agent_id, onchainId, soon), soon)).status).to.equal(200);
    const second = await link(b, onchainId, await sign(owner, b.agent_id, onchainId, soon), soon);
    expect(second.status).to.equal(409);
    expect(await second.json()).to.have.nested.property("error.code", "identity_linked_elsewhere");
  });
});

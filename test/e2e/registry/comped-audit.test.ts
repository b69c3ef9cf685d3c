import { expect } from "chai";
import { z } from "zod";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { AgentEntity } from "../../../src/registry/agent.entity.js";
import { CompDayEntity, CompGrantEntity } from "../../../src/registry/comp.entity.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";

const SKU = "security.enterprise-audit";

// The audit engine is a later issue's: this stand-in only echoes its target, so the comp path can run.
const echoAudit: SkuHandler<{ target: string }> = {
  skuId: SKU,
  poweredBy: "test-engine",
  input: z.object({ target: z.string() }).loose(),
  output: z.object({ target: z.string(), note: z.string() }),
  run: async (input) => ({ target: input.target, note: "test engine" }),
};

describe("comped enterprise audit", function () {
  this.timeout(60_000);
  let srv: TestServer;
  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    handlers.set(SKU, echoAudit);
    srv = await startTestServer({}, { handlers });
  });
  after(() => srv.close());

  const call = (headers: Record<string, string> = {}) =>
    fetch(`${srv.url}/v1/services/${SKU}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ target: "agent-x" }) });
  const denial = async (headers: Record<string, string>) => {
    const res = await call(headers);
    expect(res.status).to.equal(402);
    const body = (await res.json()) as { accepts: { maxAmountRequired: string }[] };
    expect(body.accepts[0]!.maxAmountRequired).to.equal("25000000"); // the full list price is quoted
    return res.headers.get("svc-comp-denial");
  };
  const funded = async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await fetch(`${srv.url}/v1/dev/faucet`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ address, amount_usd: 1 }) });
    return address;
  };
  const age = (a: RegisteredAgent, seconds: number) => srv.ds.manager.update(AgentEntity, { agentId: a.agent_id }, { createTime: new Date(Date.now() - seconds * 1000) });

  it("quotes the full price with the first failing condition, in the spec's order and words", async () => {
    expect(await denial({})).to.equal(null); // no comp asked for
    expect(await denial({ authorization: "Bearer svck_aaaaaaaaaaaa_" + "A".repeat(43) })).to.equal("not_registered");
    const walletless = await registerAgent(srv);
    expect(await denial(bearer(walletless.api_key))).to.equal("no_wallet_on_registration");
    const unfunded = await registerAgent(srv, { evm_address: privateKeyToAccount(generatePrivateKey()).address });
    expect(await denial(bearer(unfunded.api_key))).to.equal("no_wallet_on_registration");
    const internal = await registerAgent(srv, { evm_address: await funded() });
    await srv.ds.manager.update(AgentEntity, { agentId: internal.agent_id }, { evmAddress: srv.chain.treasury }); // a wallet the service uses
    expect(await denial(bearer(internal.api_key))).to.equal("wallet_is_internal");
    const young = await registerAgent(srv, { evm_address: await funded() });
    expect(await denial(bearer(young.api_key))).to.match(/^registration_age_insufficient:\d+s<3600s$/);
  });

  it("grants one comp to an eligible agent, runs the audit without charge, and never a second time", async () => {
    const a = await registerAgent(srv, { evm_address: await funded() });
    await age(a, 3601);
    const res = await call(bearer(a.api_key));
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { status: string; charged: boolean; job_id: string; reason: string };
    expect(body).to.include({ status: "pending", charged: false });
    expect(body.reason).to.match(/^comped audit comp_/);
    let result: Record<string, unknown> = {};
    for (let i = 0; i < 100 && result.status !== "delivered"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      result = (await (await fetch(`${srv.url}/v1/services/result/${body.job_id}`)).json()) as Record<string, unknown>;
    }
    expect(result.status).to.equal("delivered");
    expect(result.deliverable).to.deep.equal({ target: "agent-x", note: "test engine" });
    expect(await denial(bearer(a.api_key))).to.equal("comp_already_used");
  });

  it("holds the fleet-wide daily cap of 3 under concurrent requests", async () => {
    const day = new Date().toISOString().slice(0, 10);
    const usedBefore = (await srv.ds.manager.findOneBy(CompDayEntity, { day }))?.granted ?? 0;
    const agents = await Promise.all(Array.from({ length: 6 }, async () => registerAgent(srv, { evm_address: await funded() })));
    for (const a of agents) await age(a, 7200);
    const results = await Promise.all(agents.map((a) => call(bearer(a.api_key))));
    const granted = results.filter((r) => r.status === 200).length;
    expect(granted).to.equal(3 - usedBefore);
    const denials = results.filter((r) => r.status === 402).map((r) => r.headers.get("svc-comp-denial"));
    expect(denials).to.deep.equal(Array(6 - granted).fill("daily_comp_cap_reached:3"));
    expect((await srv.ds.manager.findOneByOrFail(CompDayEntity, { day })).granted).to.equal(3);
    expect(await srv.ds.manager.countBy(CompGrantEntity, { day })).to.equal(3);
  });
});

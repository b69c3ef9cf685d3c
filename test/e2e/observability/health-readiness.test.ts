import { expect } from "chai";
import net from "node:net";
import { generatePrivateKey } from "viem/accounts";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { joinChainEnv, startRigChain, startRpcCutter, type RigChain, type RpcCutter } from "../../fixtures/fault-rig.js";

// Liveness (/v1/health/live: the process answers, no dependency checks) against readiness
// (/v1/health/ready: database, chain RPC and facilitator, 503 when any is down). /v1/health stays the
// spec's liveness route: 200 with the dependency checks in its body.

type Check = { name: string; ready: boolean; detail?: string };

async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function probe(srv: TestServer) {
  const live = await fetch(`${srv.url}/v1/health/live`);
  const ready = await fetch(`${srv.url}/v1/health/ready`);
  const health = await fetch(`${srv.url}/v1/health`);
  const readyBody = (await ready.json()) as { status: string; checks: Check[] };
  return { live: live.status, liveBody: await live.json(), ready: ready.status, readyBody, check: (name: string) => readyBody.checks.find((c) => c.name === name), health: health.status, healthBody: (await health.json()) as { status: string; checks: Check[] } };
}

describe("health: liveness and readiness (database, chain RPC, facilitator)", function () {
  this.timeout(120_000);
  let chain: RigChain;
  let cutter: RpcCutter;
  before(async () => {
    chain = await startRigChain();
    cutter = await startRpcCutter(chain.rpcUrl);
  });
  after(async () => {
    await cutter?.close();
    await chain?.stop();
  });

  it("all ready: live 200, ready 200 with the three checks, /v1/health 200 with the same checks", async () => {
    const srv = await startTestServer({ ...joinChainEnv(cutter.url, chain.facilitatorKey), WORKER_CONCURRENCY: "0" });
    try {
      const p = await probe(srv);
      expect(p.live).to.equal(200);
      expect(p.liveBody).to.deep.equal({ status: "ok" });
      expect(p.ready, JSON.stringify(p.readyBody)).to.equal(200);
      expect(p.readyBody.checks.map((c) => [c.name, c.ready])).to.deep.equal([["database", true], ["chain", true], ["facilitator", true]]);
      expect(p.health).to.equal(200);
      expect(p.healthBody.status).to.equal("ok");
      expect(p.healthBody.checks.map((c) => c.name)).to.deep.equal(["database", "chain", "facilitator"]);
    } finally {
      await srv.close();
    }
  });

  it("chain RPC down: ready 503 naming chain (and the built-in facilitator), live and /v1/health stay 200; ready again once it is back", async () => {
    const srv = await startTestServer({ ...joinChainEnv(cutter.url, chain.facilitatorKey), WORKER_CONCURRENCY: "0" });
    try {
      cutter.cut();
      const down = await probe(srv);
      expect(down.ready).to.equal(503);
      expect(down.check("chain")!.ready).to.equal(false);
      expect(down.check("facilitator")!.ready).to.equal(false);
      expect(down.check("database")!.ready).to.equal(true);
      expect(down.live).to.equal(200);
      expect(down.health).to.equal(200);
      expect(down.healthBody.status).not.to.equal("ok");
      cutter.restore();
      expect((await probe(srv)).ready).to.equal(200);
    } finally {
      cutter.restore();
      await srv.close();
    }
  });

  it("built-in facilitator without gas: ready 503 naming the facilitator", async () => {
    const srv = await startTestServer({ ...joinChainEnv(cutter.url, generatePrivateKey()), WORKER_CONCURRENCY: "0" });
    try {
      const p = await probe(srv);
      expect(p.ready).to.equal(503);
      expect(p.check("chain")!.ready).to.equal(true);
      expect(p.check("facilitator")).to.deep.include({ ready: false });
      expect(p.check("facilitator")!.detail).to.contain("gas");
      expect(p.live).to.equal(200);
    } finally {
      await srv.close();
    }
  });

  it("HTTP facilitator on a dead port: ready 503 naming the facilitator, live 200", async () => {
    const srv = await startTestServer({ ...joinChainEnv(cutter.url, chain.facilitatorKey), FACILITATOR_URL: `http://127.0.0.1:${await deadPort()}`, WORKER_CONCURRENCY: "0" });
    try {
      const p = await probe(srv);
      expect(p.ready).to.equal(503);
      expect(p.check("facilitator")!.ready).to.equal(false);
      expect(p.check("chain")!.ready).to.equal(true);
      expect(p.live).to.equal(200);
      expect(p.health).to.equal(200);
    } finally {
      await srv.close();
    }
  });
});

import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance } from "../../fixtures/buyer.js";
import { testDatabaseEnv } from "../../fixtures/test-database.js";

type Json = Record<string, any>;
const TSX = "node_modules/.bin/tsx";

describe("svc worker: async jobs run by a separate worker process", function () {
  this.timeout(90_000);
  let srv: TestServer;
  let worker: ChildProcess | undefined;
  let out = "";

  before(async () => {
    // The server takes payments but runs no workers of its own.
    srv = await startTestServer({ WORKER_CONCURRENCY: "0" });
  });
  after(async () => {
    worker?.kill("SIGKILL");
    await srv.close();
  });

  it("claims the paid job from the shared queue, delivers it, deletes the result after the retention time, and stops cleanly", async () => {
    const buyer = await newBuyer(srv);
    const paying = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const before = await usdcBalance(srv, buyer.address);
    const res = await paying(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: buyer.address }) });
    const accepted = (await res.json()) as Json;
    expect(res.status).to.equal(200);
    expect(accepted.status).to.equal("pending");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 250_000n);
    // Nobody runs it yet.
    await new Promise((r) => setTimeout(r, 300));
    expect(((await (await fetch(`${srv.url}${accepted.poll_url}`)).json()) as Json).status).to.equal("pending");

    const { DATABASE_URL: _ignored, ...env } = process.env;
    worker = spawn(TSX, ["src/main.ts", "worker"], {
      env: { ...env, ...testDatabaseEnv(), SVC_URL: srv.url, LOG_LEVEL: "info", WORKER_CONCURRENCY: "2", JOB_RESULT_RETENTION_DAYS: "0.00003" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    worker.stdout!.on("data", (d: Buffer) => (out += d));
    worker.stderr!.on("data", (d: Buffer) => (out += d));

    let result: Json = {};
    for (let i = 0; i < 300 && result.status !== "delivered"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      result = (await (await fetch(`${srv.url}${accepted.poll_url}`)).json()) as Json;
    }
    expect(result.status, out).to.equal("delivered");
    expect(result.deliverable.subject).to.equal(buyer.address);
    expect(result.svc_trust.policy_manifest.payment.mode).to.equal("enforce");
    expect(out).to.contain("svc worker running");

    // The worker deletes the finished job once the retention time (here ~2.6 s) has passed.
    let gone: { status: number; body: Json } | undefined;
    for (let i = 0; i < 200; i++) {
      const r = await fetch(`${srv.url}${accepted.poll_url}`);
      gone = { status: r.status, body: (await r.json()) as Json };
      if (r.status === 404) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(gone!.status, out).to.equal(404);
    expect(gone!.body.error.code).to.equal("result_expired");

    const exited = new Promise<number | null>((resolve) => worker!.on("exit", (code) => resolve(code)));
    worker.kill("SIGTERM");
    expect(await exited, out).to.equal(0);
    worker = undefined;
  });
});

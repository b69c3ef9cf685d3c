import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { MarketsService } from "../../../gen/svc/markets/v1/markets_service_pb.js";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { testDatabaseEnv } from "../../fixtures/test-database.js";
import { registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { startCashuMint, type TestCashuMint } from "../../fixtures/cashu-mint.js";
import { call, type Answer } from "../../fixtures/markets.js";

// The tiers' daily limits hold across server processes: an in-process server and a `svc serve` child
// process on the same database (two data sources, two processes) take real parallel requests for the
// same agent, and exactly the limit passes; the rest answer 429 with the reset time.

const TSX = "node_modules/.bin/tsx";

async function startChild(): Promise<{ url: string; child: ChildProcess }> {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const env = { ...rest, LOG_LEVEL: "info", DEV_CHAIN_PERSIST: "false", ANCHOR_POLL_MS: "3600000", ...testDatabaseEnv(), PORT: "0", HOST: "127.0.0.1" };
  const child = spawn(TSX, ["src/main.ts", "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line:\n${out}`)), 60_000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d;
      const m = /"url":"(http:[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on("exit", (code) => reject(new Error(`exited early (${code}):\n${out}`)));
  });
  return { url, child };
}

const nextUtcMidnight = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

describe("markets API: daily limits across server processes", function () {
  this.timeout(180_000);
  let mint: TestCashuMint;
  let srv: TestServer;
  let child: ChildProcess | undefined;
  let other: string;

  before(async () => {
    mint = await startCashuMint();
    srv = await startTestServer({ CASHU_MINTS: mint.url, SAFE_FETCH_ALLOW: mint.hostPort });
    const started = await startChild();
    child = started.child;
    other = started.url;
  });
  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.on("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await srv?.close();
    await mint?.close();
  });

  /** `n` requests at once, alternating between the two servers. */
  const burst = (agent: RegisteredAgent, n: number, path: string) => Promise.all(Array.from({ length: n }, (_, i) => call(i % 2 ? other : srv.url, "GET", path, { key: agent.api_key })));
  const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;

  it("an Explorer gets exactly 10 calls a day across both servers; then 429 with the reset time", async () => {
    const explorer = await registerAgent(srv);
    const answers = await burst(explorer, 16, "/markets");
    expect(count(answers, 200)).to.equal(10);
    expect(count(answers, 429)).to.equal(6);
    const reset = nextUtcMidnight();
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body.error.code).to.equal("daily_limit_reached");
      expect(refused.body.error.message).to.contain(reset).and.contain("10 calls per UTC day");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).to.be.greaterThan(0).and.at.most(86_400);
    }
    // Both servers took part in the passing calls.
    const passedOn = new Set(answers.map((a, i) => (a.status === 200 ? i % 2 : -1)).filter((s) => s >= 0));
    expect(passedOn.size).to.equal(2);
    const account = await call(other, "GET", "/account", { key: explorer.api_key });
    expect(account.body).to.include({ tier: "explorer", daily_limit: 10, calls_today: 10, reset_time: reset });

    // A Connect client on the other process is refused the same way, the reset time in the error details.
    const client = createClient(MarketsService, createConnectTransport({ baseUrl: other, httpVersion: "1.1" }));
    const err = await client.listMarkets({}, { headers: { authorization: `Bearer ${explorer.api_key}` } }).catch((e) => ConnectError.from(e));
    expect((err as ConnectError).code).to.equal(Code.ResourceExhausted);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]?.metadata.reset_time).to.equal(reset);
    // Reads without a key stay open (the spec: no auth).
    expect((await call(other, "GET", "/markets")).status).to.equal(200);
  });

  it("a Contributor gets exactly 100; an Operator is unlimited", async () => {
    const contributor = await registerAgent(srv);
    expect((await call(srv.url, "POST", "/subscriptions", { key: contributor.api_key, body: { plan: "contributor" }, headers: { "x-402-payment": await mint.mintToken(10_000) } })).status).to.equal(201);
    const answers = await burst(contributor, 112, "/signals/latest");
    expect(count(answers, 200)).to.equal(100);
    expect(count(answers, 429)).to.equal(12);

    const operator = await registerAgent(srv);
    expect((await call(srv.url, "POST", "/subscriptions", { key: operator.api_key, body: { plan: "operator" }, headers: { "x-cashu": await mint.mintToken(50_000) } })).status).to.equal(201);
    const unlimited = await burst(operator, 110, "/markets");
    expect(count(unlimited, 200)).to.equal(110);
    expect((await call(srv.url, "GET", "/account", { key: operator.api_key })).body).to.include({ tier: "operator", daily_limit: 0, calls_today: 110 });
  });
});

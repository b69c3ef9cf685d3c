import { expect } from "chai";
import { spawn, execFile } from "node:child_process";
import { promisify } from "node:util";
import { testDatabaseEnv } from "../fixtures/test-database.js";

const exec = promisify(execFile);
const TSX = "node_modules/.bin/tsx";

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: "info", DEV_CHAIN_PERSIST: "false", ...testDatabaseEnv(), ...extra };
}

describe("svc CLI", function () {
  // Each test starts `tsx src/main.ts` cold (transpiling the whole tree): slow on a loaded 2-core machine.
  this.timeout(90_000);
  it("serve: listens on one port, then stops cleanly on SIGTERM with exit code 0", async function () {
    const child = spawn(TSX, ["src/main.ts", "serve"], { env: childEnv({ PORT: "0" }), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line:\n${out}`)), 60_000);
      child.stdout.on("data", (d: Buffer) => {
        out += d;
        const m = /"url":"(http:[^"]+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.on("exit", (code) => reject(new Error(`exited early (${code}):\n${out}`)));
    });
    const health = (await (await fetch(`${url}/v1/health`)).json()) as { chain: { rpc_url: string } };
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).to.equal(0);
    expect(out).to.contain('"msg":"stopped"');
    let refused = false;
    await fetch(`${url}/v1/health`).catch(() => (refused = true));
    expect(refused).to.equal(true);
    let chainGone = false; // the embedded dev chain stops with the server
    await fetch(health.chain.rpc_url, { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' }).catch(() => (chainGone = true));
    expect(chainGone).to.equal(true);
  });

  it("migrate: reports nothing pending on a migrated database", async () => {
    const { stdout } = await exec(TSX, ["src/main.ts", "migrate"], { env: childEnv({}) });
    expect(stdout).to.contain("no pending migrations");
  });

  it("check-schema: exits 0 when the schema matches the entities", async () => {
    const { stdout } = await exec(TSX, ["src/main.ts", "check-schema"], { env: childEnv({}) });
    expect(stdout).to.contain("schema matches");
  });

  it("ledger check: exit 0 when the journal balances and agrees with the business records", async () => {
    const { stdout } = await exec(TSX, ["src/main.ts", "ledger", "check"], { env: childEnv({}) });
    expect(stdout).to.contain("the journal balances");
  });

  it("refuses invalid settings with a message naming them, exit code 1", async () => {
    const err = await exec(TSX, ["src/main.ts", "migrate"], { env: childEnv({ PORT: "70000", DATABASE_URL: "postgres://x" }) }).catch((e: { code: number; stderr: string }) => e);
    expect(err).to.have.property("code", 1);
    expect((err as { stderr: string }).stderr).to.contain("PORT").and.to.contain("DATABASE_URL");
  });
});

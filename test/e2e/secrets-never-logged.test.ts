import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { testDatabaseEnv } from "../fixtures/test-database.js";

// `svc serve` started with distinctive secrets (some inline, some through NAME_FILE) at LOG_LEVEL=trace;
// paid calls, replays, refusals, bad keys and malformed requests are sent; then nothing the process
// wrote to stdout or stderr may contain any of the secrets.

const TSX = "node_modules/.bin/tsx";
const SECRETS = {
  OPERATOR_API_KEY: "op-LEAKPROBE-0a1b2c3d4e5f",
  FACILITATOR_API_KEY: "facapi-LEAKPROBE-9f8e7d6c5b",
  FACILITATOR_AUTH_TOKEN: "factok-LEAKPROBE-1234567890",
  PROOF_HMAC_KEY: "hmac-LEAKPROBE-abcdefabcdef",
  WEBHOOK_SECRET_KEY: "whk-LEAKPROBE-fedcbafedcba",
  CASHU_PROOF_KEY: "cashu-LEAKPROBE-0011223344",
  LLM_API_KEY: "sk-LEAKPROBE-5566778899aabb",
};
const VIA_FILE = new Set(["OPERATOR_API_KEY", "WEBHOOK_SECRET_KEY", "LLM_API_KEY"]);

describe("secrets are never logged (svc serve at trace level)", function () {
  this.timeout(120_000);
  let child: ChildProcess;
  let out = "";
  let url: string;
  let dir: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-leak-"));
    const env: NodeJS.ProcessEnv = { ...process.env, ...testDatabaseEnv(), PORT: "0", LOG_LEVEL: "trace", DEV_CHAIN_PERSIST: "false", ANCHOR_POLL_MS: "3600000", LLM_BASE_URL: "http://127.0.0.1:9/v1", LLM_MODEL: "probe-model" };
    delete env.DATABASE_URL;
    Object.assign(env, testDatabaseEnv());
    for (const [name, value] of Object.entries(SECRETS)) {
      if (VIA_FILE.has(name)) {
        const file = path.join(dir, name);
        fs.writeFileSync(file, `${value}\n`, { mode: 0o600 });
        env[`${name}_FILE`] = file;
      } else env[name] = value;
    }
    child = spawn(TSX, ["src/main.ts", "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line:\n${out}`)), 60_000);
      const check = () => {
        const m = /"url":"(http:[^"]+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        } else setTimeout(check, 50);
      };
      check();
      child.once("exit", (code) => reject(new Error(`exited early (${code}):\n${out}`)));
    });
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("serves paid calls and refusals, then shuts down; the captured output holds no secret", async () => {
    const json = { "content-type": "application/json" };
    // Public reads and a 404.
    expect((await fetch(`${url}/v1/services`)).status).to.equal(200);
    expect((await fetch(`${url}/no/such/route`)).status).to.equal(404);
    // A buyer funded by the dev faucet pays a call with the x402 v2 client; the payment is then replayed.
    const buyer = privateKeyToAccount(generatePrivateKey());
    expect((await fetch(`${url}/v1/dev/faucet`, { method: "POST", headers: json, body: JSON.stringify({ address: buyer.address, amount_usd: 1 }) })).status).to.equal(200);
    let signature: string | undefined;
    const recordingFetch: typeof fetch = async (input, init) => {
      const h = new Headers((input instanceof Request ? input.headers : undefined) ?? init?.headers);
      signature ??= h.get("payment-signature") ?? undefined;
      return fetch(input, init);
    };
    const pay = wrapFetchWithPayment(recordingFetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer)));
    const paid = await pay(`${url}/v1/services/agent.trust-badge`, { method: "POST", headers: json, body: JSON.stringify({ subject: buyer.address }) });
    expect(paid.status).to.equal(200);
    expect(paid.headers.get("payment-response")).to.be.a("string");
    expect(signature).to.be.a("string");
    const replay = await fetch(`${url}/v1/services/agent.trust-badge`, { method: "POST", headers: { ...json, "payment-signature": signature! }, body: JSON.stringify({ subject: buyer.address }) });
    expect(replay.status).to.be.oneOf([200, 402, 409]);
    // A forged payment header and one with a bad signature.
    expect((await fetch(`${url}/v1/services/agent.trust-badge`, { method: "POST", headers: { ...json, "payment-signature": "not-base64!" }, body: "{}" })).status).to.be.within(400, 499);
    // Operator routes with the right key, a wrong key, and a key that is the facilitator's.
    expect((await fetch(`${url}/v1/admin/payouts`, { headers: { authorization: `Bearer ${SECRETS.OPERATOR_API_KEY}` } })).status).to.equal(200);
    expect((await fetch(`${url}/v1/admin/payouts`, { headers: { authorization: `Bearer ${SECRETS.FACILITATOR_API_KEY}` } })).status).to.be.within(401, 403);
    // The facilitator API with its key and a malformed body; and with the operator's key.
    expect((await fetch(`${url}/facilitator/verify`, { method: "POST", headers: { ...json, authorization: `Bearer ${SECRETS.FACILITATOR_API_KEY}` }, body: "{}" })).status).to.be.within(200, 499);
    expect((await fetch(`${url}/facilitator/settle`, { method: "POST", headers: { ...json, authorization: `Bearer ${SECRETS.OPERATOR_API_KEY}` }, body: "{}" })).status).to.be.within(400, 499);
    // Malformed JSON, an oversized body, a Connect call with a bad message.
    expect((await fetch(`${url}/v1/agents/register`, { method: "POST", headers: json, body: "{not json" })).status).to.equal(400);
    expect((await fetch(`${url}/v1/agents/register`, { method: "POST", headers: json, body: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }) })).status).to.equal(413);
    expect((await fetch(`${url}/svc.catalog.v1.CatalogService/ListServices`, { method: "POST", headers: json, body: '{"nope": 1}' })).status).to.be.within(200, 499);

    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).to.equal(0);
    // The output is real (so an empty capture cannot pass) and carries no secret, whole or without a prefix.
    expect(out).to.contain("svc listening").and.contain('"msg":"stopped"');
    expect(out.split("\n").length).to.be.greaterThan(10);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(out.includes(value), `${name} appears in the log`).to.equal(false);
      expect(out.includes(value.split("-LEAKPROBE-")[1]!), `${name}'s tail appears in the log`).to.equal(false);
    }
  });
});

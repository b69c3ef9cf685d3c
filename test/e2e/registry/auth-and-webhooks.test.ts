import { expect } from "chai";
import http from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";

const json = { "content-type": "application/json" };

/** The documented recipe: svc-signature = "t=<unix>,v1=<hex HMAC-SHA256(secret, `${t}.${body}`)>". */
function verifySignature(header: string, body: string, secret: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=") as [string, string]));
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A callback receiver on loopback that answers 503 to its first `failures` deliveries. */
async function receiver(failures: number) {
  const seen: { headers: http.IncomingHttpHeaders; body: string; status: number }[] = [];
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const status = seen.length < failures ? 503 : 204;
    seen.push({ headers: req.headers, body, status });
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hooks`, port, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function until<T>(fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("registry authorization and webhooks", function () {
  this.timeout(60_000);
  let srv: TestServer;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    hooks = await receiver(2);
    srv = await startTestServer({ SAFE_FETCH_ALLOW: `127.0.0.1:${hooks.port}`, WEBHOOK_BACKOFF_BASE_MS: "100" });
  });
  after(async () => {
    await srv.close();
    await hooks.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string>) => fetch(`${srv.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const wallet = () => privateKeyToAccount(generatePrivateKey()).address;

  describe("authorization matrix on every Bearer route", () => {
    let me: RegisteredAgent;
    let other: RegisteredAgent;
    before(async () => {
      me = await registerAgent(srv);
      other = await registerAgent(srv);
    });
    const routes = () => [
      { path: `/a2a/agents/${me.agent_id}/wallet`, body: { evm_address: wallet() } },
      { path: `/a2a/agents/${me.agent_id}/callback`, body: { callback_url: "" } },
      { path: `/a2a/agents/${me.agent_id}/keys/rotate`, body: {} },
    ];

    it("no key: 401 auth_required", async () => {
      for (const r of routes()) {
        const res = await post(r.path, r.body, json);
        expect(res.status, r.path).to.equal(401);
        expect(await res.json()).to.have.nested.property("error.code", "auth_required");
      }
      expect((await fetch(`${srv.url}/a2a/agents/${me.agent_id}/webhooks`)).status).to.equal(401);
    });

    it("malformed keys: 401 auth_required", async () => {
      const last = me.api_key.at(-1)!;
      const tampered = `${me.api_key.slice(0, -1)}${last === "A" ? "B" : "A"}`; // always differs from the real key
      for (const bad of ["Bearer", "Bearer nope", `Basic ${me.api_key}`, `Bearer ${me.note}`, `Bearer ${me.api_key}x`, `Bearer ${tampered}`]) {
        for (const r of routes()) expect((await post(r.path, r.body, { ...json, authorization: bad })).status, `${bad} ${r.path}`).to.equal(401);
      }
    });

    it("another agent's key: 403 not_your_agent", async () => {
      for (const r of routes()) {
        const res = await post(r.path, r.body, bearer(other.api_key));
        expect(res.status, r.path).to.equal(403);
        expect(await res.json()).to.have.nested.property("error.code", "not_your_agent");
      }
    });

    it("the agent's own key works by id or name; a rotated key is dead at once", async () => {
      const byName = await post(`/a2a/agents/${me.name.toUpperCase()}/wallet`, { evm_address: wallet() }, bearer(me.api_key));
      expect(byName.status).to.equal(200);
      const rotated = await post(`/a2a/agents/${me.agent_id}/keys/rotate`, {}, bearer(me.api_key));
      expect(rotated.status).to.equal(200);
      const { api_key } = (await rotated.json()) as { api_key: string };
      expect(api_key).to.not.equal(me.api_key);
      const old = await post(`/a2a/agents/${me.agent_id}/wallet`, { evm_address: wallet() }, bearer(me.api_key));
      expect(old.status).to.equal(401);
      expect((await post(`/a2a/agents/${me.agent_id}/wallet`, { evm_address: wallet() }, bearer(api_key))).status).to.equal(200);
      me = { ...me, api_key };
    });

    it("lets one of two concurrent rotations win", async () => {
      const [a, b] = await Promise.all([0, 1].map(() => post(`/a2a/agents/${me.agent_id}/keys/rotate`, {}, bearer(me.api_key))));
      expect([a!.status, b!.status].sort()).to.deep.equal([200, 401]);
    });
  });

  it("refuses payout wallets the service itself uses, and malformed addresses", async () => {
    const me = await registerAgent(srv);
    const { treasury, facilitator, faucet } = devAccounts();
    for (const internal of [treasury.address, facilitator.address, faucet.address, srv.chain.network.usdcAddress, "0xcA11bde05977b3631167028862bE2a173976CA11"]) {
      const res = await post(`/a2a/agents/${me.agent_id}/wallet`, { evm_address: internal }, bearer(me.api_key));
      expect(res.status, internal).to.equal(409);
      expect(await res.json()).to.have.nested.property("error.code", "wallet_is_internal");
    }
    // Flip the case of one letter of a checksummed address: the EIP-55 checksum no longer matches.
    const good = wallet();
    const i = good.slice(2).search(/[a-fA-F]/) + 2;
    const flipped = good[i] === good[i]!.toUpperCase() ? good[i]!.toLowerCase() : good[i]!.toUpperCase();
    const badChecksum = good.slice(0, i) + flipped + good.slice(i + 1);
    for (const bad of ["0x1234", "not-an-address", badChecksum, ""]) {
      expect((await post(`/a2a/agents/${me.agent_id}/wallet`, { evm_address: bad }, bearer(me.api_key))).status, bad).to.equal(400);
    }
  });

  it("refuses callback URLs that are not http(s), not URLs, or carry credentials", async () => {
    const me = await registerAgent(srv);
    for (const url of ["ftp://example.com/x", "not a url", "https://user:pw@example.com/hook", `https://example.com/${"x".repeat(2100)}`]) {
      const res = await post(`/a2a/agents/${me.agent_id}/callback`, { callback_url: url }, bearer(me.api_key));
      expect(res.status, url).to.equal(400);
      expect(await res.json()).to.have.nested.property("error.code", "invalid_callback_url");
    }
  });

  it("delivers signed webhooks, retrying a failing receiver with backoff, de-duplicable by event id, with a readable log", async () => {
    const me = await registerAgent(srv);
    const res = await post(`/a2a/agents/${me.agent_id}/callback`, { callback_url: hooks.url }, bearer(me.api_key));
    expect(res.status).to.equal(200);
    const cb = (await res.json()) as { signing_secret: string; signature_header: string };
    expect(cb.signing_secret).to.match(/^whsec_/);
    expect(cb.signature_header).to.equal("svc-signature");
    const delivered = await until(async () => hooks.seen.find((s) => s.status === 204));
    expect(hooks.seen.length).to.equal(3); // two 503s, then delivered
    const ids = new Set(hooks.seen.map((s) => s.headers["svc-event-id"]));
    expect(ids.size).to.equal(1); // the same event each time: receivers de-duplicate by id
    const event = JSON.parse(delivered.body) as Record<string, unknown>;
    expect(event).to.include({ type: "callback.test", agent_id: me.agent_id, id: delivered.headers["svc-event-id"] });
    expect(verifySignature(String(delivered.headers["svc-signature"]), delivered.body, cb.signing_secret)).to.equal(true);
    expect(verifySignature(String(delivered.headers["svc-signature"]), delivered.body + " ", cb.signing_secret)).to.equal(false);

    // A wallet change is an event too.
    await post(`/a2a/agents/${me.agent_id}/wallet`, { evm_address: wallet() }, bearer(me.api_key));
    await until(async () => hooks.seen.find((s) => s.headers["svc-event-type"] === "wallet.updated"));

    const log = (await (await fetch(`${srv.url}/a2a/agents/${me.agent_id}/webhooks`, { headers: bearer(me.api_key) })).json()) as { deliveries: Record<string, unknown>[] };
    const test = log.deliveries.find((d) => d.event_type === "callback.test")!;
    expect(test).to.include({ state: "delivered", attempts: 3, last_status: 204 });
    expect((await fetch(`${srv.url}/a2a/agents/${me.agent_id}/webhooks`, { headers: bearer((await registerAgent(srv)).api_key) })).status).to.equal(403);
  });

  it("a callback whose name resolves to a private address is refused at delivery (no connection)", async () => {
    const me = await registerAgent(srv);
    // localhost resolves to loopback and this port is not allowlisted: refused inside the DNS lookup.
    const res = await post(`/a2a/agents/${me.agent_id}/callback`, { callback_url: `http://localhost:${hooks.port}/hooks` }, bearer(me.api_key));
    expect(res.status).to.equal(200);
    const entry = await until(async () => {
      const log = (await (await fetch(`${srv.url}/a2a/agents/${me.agent_id}/webhooks`, { headers: bearer(me.api_key) })).json()) as { deliveries: Record<string, any>[] };
      const d = log.deliveries[0];
      return d && d.attempts > 0 && d.last_error ? d : undefined; // attempts is counted at the claim, the error after it
    });
    expect(entry.last_error).to.match(/non-public|not a public/);
    expect(hooks.seen.some((s) => s.headers["svc-event-id"] === entry.event_id)).to.equal(false);
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { BaseError, createPublicClient, HttpRequestError, RpcRequestError, TimeoutError, type PublicClient } from "viem";
import { baseSepolia } from "viem/chains";
import { batchedHttp } from "../../../src/chain/rpc-transport.js";
import { devAccounts } from "../../../src/chain/dev-accounts.js";
import { startDevChain, type DevChain } from "../../../src/chain/dev-chain.js";
import { NETWORKS } from "../../../src/chain/networks.js";
import { ERC8004_TESTNET_IDENTITY_REGISTRY } from "../../../src/config.js";
import { createLogger } from "../../../src/platform/log.js";

// The chain client's transport against a real anvil, through a loopback proxy that records each HTTP
// request: what one event-loop turn asks for goes out as one JSON-RPC batch, the next turn's as another,
// a refused request fails alone, and a node that answers a batch with one error object refuses all of it.

/** Forwards to `target` (or answers `override` when set) and records each request body. */
async function recordingProxy(target: string) {
  const bodies: unknown[] = [];
  let override: { text: string; status: number; delayMs: number } | undefined;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    bodies.push(JSON.parse(body));
    if (override) await new Promise((r) => setTimeout(r, override!.delayMs));
    const answer = override?.text ?? (await (await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })).text());
    if (!res.destroyed) res.writeHead(override?.status ?? 200, { "content-type": "application/json" }).end(answer);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    answerWith: (text: string | undefined, status = 200, delayMs = 0) => (override = text === undefined ? undefined : { text, status, delayMs }),
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe("chain RPC transport: one JSON-RPC batch per event-loop turn", function () {
  this.timeout(60_000);
  let dev: DevChain;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let client: PublicClient;
  const network = NETWORKS["base-sepolia"];

  before(async () => {
    dev = await startDevChain({ network, minter: devAccounts().faucet.address, identityRegistry: ERC8004_TESTNET_IDENTITY_REGISTRY, log: createLogger("silent") });
    proxy = await recordingProxy(dev.rpcUrl);
    client = createPublicClient({ chain: { ...baseSepolia, rpcUrls: { default: { http: [proxy.url] } } }, transport: batchedHttp(proxy.url, { timeout: 5_000, retryCount: 0 }) }) as PublicClient;
  });
  after(async () => {
    await proxy?.close();
    await dev?.stop();
  });
  beforeEach(() => proxy.answerWith(undefined));

  it("sends the requests of one turn as one batch and gives each its own answer", async () => {
    proxy.bodies.length = 0;
    const treasury = devAccounts().treasury.address;
    const [chainId, block, balance, nonce] = await Promise.all([client.getChainId(), client.getBlockNumber({ cacheTime: 0 }), client.getBalance({ address: treasury }), client.getTransactionCount({ address: treasury })]);
    expect(chainId).to.equal(network.chainId);
    expect(block).to.be.a("bigint");
    expect(balance > 0n).to.equal(true);
    expect(nonce).to.be.a("number");
    expect(proxy.bodies).to.have.length(1);
    expect((proxy.bodies[0] as { method: string }[]).map((b) => b.method)).to.have.members(["eth_chainId", "eth_blockNumber", "eth_getBalance", "eth_getTransactionCount"]);
  });

  it("sends what a later turn asks for in another batch, at once", async () => {
    proxy.bodies.length = 0;
    await client.getChainId();
    await client.getBlockNumber({ cacheTime: 0 });
    expect(proxy.bodies).to.have.length(2);
  });

  it("refuses a request the node refused, alone, as an RpcRequestError", async () => {
    const [refused, fine] = await Promise.allSettled([client.sendRawTransaction({ serializedTransaction: "0x02deadbeef" }), client.getChainId()]);
    expect(refused.status).to.equal("rejected");
    const err = (refused as PromiseRejectedResult).reason as BaseError;
    expect(err.walk((e) => e instanceof RpcRequestError)).to.be.instanceOf(RpcRequestError);
    expect(fine).to.deep.equal({ status: "fulfilled", value: network.chainId });
  });

  it("refuses every request of a batch the node answered with one error object", async () => {
    proxy.answerWith(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32005, message: "rate limited" } }));
    const results = await Promise.allSettled([client.getChainId(), client.getBlockNumber({ cacheTime: 0 })]);
    for (const r of results) {
      expect(r.status).to.equal("rejected");
      expect(String((r as PromiseRejectedResult).reason.message)).to.contain("rate limited");
    }
  });

  it("fails a request the node answered with an HTTP error as HttpRequestError with its status", async () => {
    proxy.answerWith("upstream down", 503);
    const err = (await client.getChainId().catch((e) => e)) as BaseError;
    const http = err.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
    expect(http).to.be.instanceOf(HttpRequestError);
    expect(http!.status).to.equal(503);
    // No JSON-RPC answer: not mistaken for the node refusing the request.
    expect(err.walk((e) => e instanceof RpcRequestError)).to.equal(null);
  });

  it("keeps a JSON-RPC error sent with an HTTP error status as the node's refusal", async () => {
    proxy.answerWith(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32005, message: "too many requests" } }), 429);
    const err = (await client.getChainId().catch((e) => e)) as BaseError;
    expect(err.walk((e) => e instanceof RpcRequestError)).to.be.instanceOf(RpcRequestError);
    expect(err.message).to.contain("too many requests");
  });

  it("gives up on a node that does not answer within the timeout with TimeoutError", async () => {
    const slow = createPublicClient({ transport: batchedHttp(proxy.url, { timeout: 200, retryCount: 0 }) });
    proxy.answerWith("{}", 200, 2_000);
    const started = Date.now();
    const err = (await slow.getChainId().catch((e) => e)) as BaseError;
    expect(err.walk((e) => e instanceof TimeoutError)).to.be.instanceOf(TimeoutError);
    expect(Date.now() - started).to.be.below(1_500);
  });
});

import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { BaseError, createPublicClient, RpcRequestError, type PublicClient } from "viem";
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
  let override: string | undefined;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    bodies.push(JSON.parse(body));
    const answer = override ?? (await (await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })).text());
    res.writeHead(200, { "content-type": "application/json" }).end(answer);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    answerWith: (text: string | undefined) => (override = text),
    close: () => new Promise<void>((r) => server.close(() => r())),
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
});

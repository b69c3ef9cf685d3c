import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { encodeAbiParameters } from "viem";
import { CrossChainReader } from "../../../src/onchain-prices/chain-reader.js";
import { parsePriceSources } from "../../../src/onchain-prices/price-sources.js";

// The JSON-RPC adapter against a local server speaking Ethereum JSON-RPC over HTTP, including the ways
// public RPC endpoints fail: rate limiting (429), JSON-RPC error objects, bodies that are not JSON, and
// eth_call results that do not decode. A loopback RPC not on the allowlist is refused by the safe fetcher.

const FEED = "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419";
type Mode = "ok" | "rate-limited" | "rpc-error" | "not-json" | "short-result";
let mode: Mode = "ok";
const calls: string[] = [];

const rpc: http.RequestListener = (req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: [{ data: string }] };
    calls.push(method);
    const send = (status: number, payload: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(typeof payload === "string" ? payload : JSON.stringify(payload));
    if (mode === "rate-limited") return send(429, { jsonrpc: "2.0", id, error: { code: -32005, message: "rate limit exceeded" } });
    if (mode === "not-json") return send(200, "<html>502 Bad Gateway</html>");
    if (mode === "rpc-error") return send(200, { jsonrpc: "2.0", id, error: { code: -32603, message: "internal error: upstream node unavailable" } });
    if (method === "eth_chainId") return send(200, { jsonrpc: "2.0", id, result: "0x1" });
    if (method === "eth_blockNumber") return send(200, { jsonrpc: "2.0", id, result: "0x1234" });
    if (method === "eth_call") {
      const selector = params[0].data.slice(0, 10);
      if (mode === "short-result") return send(200, { jsonrpc: "2.0", id, result: "0x1234" });
      if (selector === "0x313ce567") return send(200, { jsonrpc: "2.0", id, result: encodeAbiParameters([{ type: "uint8" }], [8]) }); // decimals()
      if (selector === "0xfeaf968c") {
        // latestRoundData(): (roundId, answer, startedAt, updatedAt, answeredInRound)
        const t = BigInt(Math.floor(Date.now() / 1000) - 10);
        return send(200, { jsonrpc: "2.0", id, result: encodeAbiParameters([{ type: "uint80" }, { type: "int256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint80" }], [42n, 312_345_678_901n, t, t, 42n]) });
      }
      return send(200, { jsonrpc: "2.0", id, error: { code: 3, message: "execution reverted", data: "0x" } });
    }
    send(200, { jsonrpc: "2.0", id, error: { code: -32601, message: "method not found" } });
  });
};

describe("on-chain reads over JSON-RPC (viem http transport through the safe fetcher)", () => {
  let server: http.Server;
  let base: string;
  const reader = (allow: string[]) =>
    new CrossChainReader(parsePriceSources(`chains:\n  - { name: ethereum, chain_id: 1, rpc_url: "${base}/v3/secret-key", timeout_ms: 2000 }\npairs:\n  ETH-USD:\n    - { chain: ethereum, kind: chainlink, address: "${FEED}" }\n`), { allow, allowHttp: true }, 0);

  before(async () => {
    server = http.createServer(rpc);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());
  afterEach(() => {
    mode = "ok";
  });

  it("reads a Chainlink round at one block and checks the chain id", async () => {
    const [r] = await reader([new URL(base).host]).read("ETH-USD");
    expect(r!.outcome.ok).to.equal(true);
    if (!r!.outcome.ok) return;
    expect(r!.outcome.blockNumber).to.equal(0x1234n);
    const src = r!.outcome.sources[0]!;
    expect(src.reading?.kind).to.equal("chainlink");
    expect(src.reading && "round" in src.reading && src.reading.round.answer).to.equal(312_345_678_901n);
    expect(calls).to.include.members(["eth_chainId", "eth_blockNumber", "eth_call"]);
  });

  it("reports rate limiting, JSON-RPC errors and non-JSON bodies as an unreachable chain", async () => {
    for (const [m, why] of [["rate-limited", /429|rate limit/i], ["rpc-error", /internal error|upstream node/i], ["not-json", /JSON|HTTP request failed/i]] as const) {
      mode = m;
      const [r] = await reader([new URL(base).host]).read("ETH-USD");
      expect(r!.outcome.ok, m).to.equal(false);
      if (r!.outcome.ok) continue;
      expect(r!.outcome.status, m).to.equal("unreachable");
      expect(r!.outcome.error, m).to.match(why);
      expect(r!.outcome.error, m).to.not.contain("secret-key"); // the RPC path (an API key) is never echoed
    }
  });

  it("reports an eth_call result that does not decode as a failed source", async () => {
    mode = "short-result";
    const [r] = await reader([new URL(base).host]).read("ETH-USD");
    expect(r!.outcome.ok).to.equal(true);
    if (!r!.outcome.ok) return;
    const src = r!.outcome.sources[0]!;
    expect(src.reading).to.equal(undefined);
    expect(src.error).to.be.a("string").and.not.equal("");
  });

  it("refuses a loopback RPC that is not on the allowlist", async () => {
    const [r] = await reader([]).read("ETH-USD");
    expect(r!.outcome.ok).to.equal(false);
    if (!r!.outcome.ok) expect(r!.outcome.error).to.match(/not a public address/);
  });
});

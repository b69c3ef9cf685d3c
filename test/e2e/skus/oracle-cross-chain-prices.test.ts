import { expect } from "chai";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Address } from "viem";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { startPriceChain, type PriceChain } from "../../fixtures/price-chains.js";
import { expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { withUpstream, type UpstreamSetup } from "../../fixtures/upstream.js";
import { CrossChainReader } from "../../../src/onchain-prices/chain-reader.js";
import { parsePriceSources } from "../../../src/onchain-prices/price-sources.js";
import { CircuitBreakers } from "../../../src/policy/circuit-breakers.js";
import { CrossChainPricesOutput, oracleCrossChainPrices } from "../../../src/skus/oracle-cross-chain-prices.js";

const SKU = "oracle.cross-chain-prices";
const PRICE = 30_000n; // $0.03

// Two real EVM chains (anvil, chain ids 31337 and 31338) with a Chainlink-style aggregator, a Uniswap
// v2-style pair and Uniswap v3-style pools deployed from test/fixtures/contracts, plus a chain whose
// RPC port is closed and one whose RPC answers for another chain id.

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));

describe("oracle.cross-chain-prices: per-chain on-chain prices, their median and the widest pair of chains", function () {
  this.timeout(120_000);
  let alpha: PriceChain;
  let beta: PriceChain;
  let up: UpstreamSetup;
  let aggA: Address;
  let aggB: Address;
  let configText: string;

  const setRound = (chain: PriceChain, agg: Address, roundId: bigint, answer: bigint, updatedAt: bigint, answeredInRound = roundId) =>
    chain.write(agg, "MockAggregator", "setRound", [roundId, answer, updatedAt, updatedAt, answeredInRound]);

  before(async () => {
    [alpha, beta] = await Promise.all([startPriceChain(31337), startPriceChain(31338)]);
    // alpha: Chainlink 2000.12345678 (8 decimals); Uniswap v2 USDC(6)/WETH(18) with 4,001,000 USDC : 2,000 WETH = 2000.5
    aggA = await alpha.deploy("MockAggregator", [8, "ETH / USD"]);
    await setRound(alpha, aggA, 7n, 2000_12345678n, nowSeconds() - 60n);
    const usdcA = await alpha.deploy("MockToken", ["USD Coin", "USDC", 6]);
    const wethA = await alpha.deploy("MockToken", ["Wrapped Ether", "WETH", 18]);
    const pairA = await alpha.deploy("MockUniswapV2Pair", [usdcA, wethA]);
    await alpha.write(pairA, "MockUniswapV2Pair", "setReserves", [4_001_000n * 10n ** 6n, 2_000n * 10n ** 18n]);
    // beta: Chainlink 2010; v3 WETH/DAI (18/18, base token0) at sqrtPriceX96 = 179 * 2^94 -> 179^2 / 16 = 2002.5625;
    // v3 USDC/WETH (6/18, base token1, inverted) at sqrtPriceX96 = 20000 * 2^96 -> 10^12 / 20000^2 = 2500
    aggB = await beta.deploy("MockAggregator", [8, "ETH / USD"]);
    await setRound(beta, aggB, 3n, 2010_00000000n, nowSeconds() - 30n);
    const wethB = await beta.deploy("MockToken", ["Wrapped Ether", "WETH", 18]);
    const daiB = await beta.deploy("MockToken", ["Dai", "DAI", 18]);
    const usdcB = await beta.deploy("MockToken", ["USD Coin", "USDC", 6]);
    const poolB = await beta.deploy("MockUniswapV3Pool", [wethB, daiB]);
    await beta.write(poolB, "MockUniswapV3Pool", "setSlot0", [179n * 2n ** 94n, 76_000]);
    const poolB2 = await beta.deploy("MockUniswapV3Pool", [usdcB, wethB]);
    await beta.write(poolB2, "MockUniswapV3Pool", "setSlot0", [20_000n * 2n ** 96n, -198_000]);

    const gammaPort = await closedPort();
    configText = `
chains:
  - { name: alpha, chain_id: 31337, rpc_url: "${alpha.rpcUrl}", timeout_ms: 3000 }
  - { name: beta, chain_id: 31338, rpc_url: "${beta.rpcUrl}/", timeout_ms: 3000 }
  - { name: gamma, chain_id: 31339, rpc_url: "http://127.0.0.1:${gammaPort}", timeout_ms: 1000 }
  - { name: delta, chain_id: 1, rpc_url: "${alpha.rpcUrl}", timeout_ms: 3000 }
pairs:
  ETH-USD:
    - { chain: alpha, kind: chainlink, address: "${aggA}", max_age_seconds: 3600, note: mock feed }
    - { chain: alpha, kind: uniswap-v2, address: "${pairA}", base_token: "${wethA}" }
    - { chain: beta, kind: chainlink, address: "${aggB}", max_age_seconds: 3600 }
    - { chain: beta, kind: uniswap-v3, address: "${poolB}", base_token: "${wethB}" }
    - { chain: beta, kind: uniswap-v3, address: "${poolB2}", base_token: "${wethB}" }
    - { chain: beta, kind: uniswap-v2, address: "${poolB}", base_token: "${wethB}", note: not a v2 pair }
    - { chain: gamma, kind: chainlink, address: "${aggA}" }
    - { chain: delta, kind: chainlink, address: "${aggA}" }
  BTC-USD:
    - { chain: alpha, kind: chainlink, address: "${aggA}" }
    - { chain: alpha, kind: uniswap-v2, address: "${pairA}", base_token: "${wethA}" }
    - { chain: beta, kind: chainlink, address: "${aggB}" }
  LINK-USD:
    - { chain: gamma, kind: chainlink, address: "${aggA}" }
    - { chain: delta, kind: chainlink, address: "${aggA}" }
`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "price-sources-"));
    const file = path.join(dir, "price-sources.yaml");
    fs.writeFileSync(file, configText);
    up = await withUpstream(
      (_req, res) => res.writeHead(404).end(),
      (base) => ({
        SAFE_FETCH_ALLOW: [new URL(base).host, alpha.hostPort, beta.hostPort, `127.0.0.1:${gammaPort}`].join(","),
        PRICE_SOURCES_FILE: file,
        PRICE_CACHE_SECONDS: "0",
        BREAKER_FAILURE_THRESHOLD: "1000",
      }),
    );
  });
  after(async () => {
    await up?.close();
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  const pay = (body: unknown) => up.payJson(SKU, body);
  const chainOf = (d: Json, name: string) => d.chains.find((c: Json) => c.chain === name);

  it("prices each chain from its contracts, exactly, with the aggregate and the widest pair flagged; unreachable and wrong chains are reported", async () => {
    const before = await up.balance();
    const res = await pay({ pair: "eth/usd", deviation_threshold_bps: 25 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const d = res.body.deliverable;
    expect(CrossChainPricesOutput.safeParse(d).error).to.equal(undefined); // the published x-output-schema holds
    expect(d.pair).to.equal("ETH-USD");

    const a = chainOf(d, "alpha");
    expect(a).to.include({ chain_id: 31337, status: "ok", price: "2000.31172839", rpc: alpha.rpcUrl, cached: false });
    const [feed, v2] = a.sources;
    expect(feed).to.include({ kind: "chainlink", status: "ok", price: "2000.12345678", method: "latestRoundData()", block_number: a.block_number, note: "mock feed" });
    expect(feed.contract.toLowerCase()).to.equal(aggA.toLowerCase());
    expect(feed.round).to.include({ decimals: 8, round_id: "7", answer: "200012345678", answered_in_round: "7", description: "ETH / USD", max_age_seconds: 3600 });
    expect(v2).to.include({ kind: "uniswap-v2", status: "ok", price: "2000.5", method: "getReserves()" });
    expect(v2.pool).to.include({ decimals0: 6, decimals1: 18, reserve0: "4001000000000", reserve1: "2000000000000000000000" });
    expect(Number(a.block_number)).to.be.greaterThan(0);
    expect(Date.parse(feed.read_at)).to.be.closeTo(Date.now(), 60_000);

    const b = chainOf(d, "beta");
    expect(b).to.include({ chain_id: 31338, status: "ok", price: "2010" });
    expect(b.sources.map((s: Json) => [s.kind, s.status, s.price])).to.deep.equal([
      ["chainlink", "ok", "2010"],
      ["uniswap-v3", "ok", "2002.5625"],
      ["uniswap-v3", "ok", "2500"],
      ["uniswap-v2", "failed", null],
    ]);
    expect(b.sources[1].pool).to.include({ sqrt_price_x96: (179n * 2n ** 94n).toString(), tick: 76_000 });
    expect(b.sources[3].error).to.be.a("string").and.not.equal("");

    expect(chainOf(d, "gamma")).to.include({ status: "unreachable", price: null, block_number: null });
    expect(chainOf(d, "gamma").error).to.contain("ECONNREFUSED");
    expect(chainOf(d, "delta")).to.include({ status: "wrong_chain", price: null });
    expect(chainOf(d, "delta").error).to.contain("31337");

    expect(d.aggregate).to.deep.equal({ method: "median of the chains' prices", price: "2005.155864195", chains: ["alpha", "beta"] });
    expect(d.highest_deviation).to.deep.equal({
      low: { chain: "alpha", price: "2000.31172839" },
      high: { chain: "beta", price: "2010" },
      deviation_bps: "48.43",
      threshold_bps: 25,
      exceeds_threshold: true,
    });
    expect(d.price_decimals).to.equal(18);
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("flags a stale round (old updatedAt, or an answer carried over from an earlier round) and leaves it out", async () => {
    await setRound(alpha, aggA, 8n, 1990_00000000n, nowSeconds() - 7200n);
    await setRound(beta, aggB, 4n, 2500_00000000n, nowSeconds() - 10n, 3n);
    try {
      const before = await up.balance();
      const res = await pay({ pair: "ETH-USD", chains: ["alpha", "beta"] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const d = res.body.deliverable;
      expect(d.chains.map((c: Json) => c.chain)).to.deep.equal(["alpha", "beta"]);
      const feedA = chainOf(d, "alpha").sources[0];
      expect(feedA).to.include({ status: "stale", price: "1990" });
      expect(feedA.stale_reason).to.match(/updatedAt is \d+ s old, more than the 3600 s allowed/);
      expect(feedA.round.age_seconds).to.be.at.least(7200);
      expect(chainOf(d, "alpha").price).to.equal("2000.5");
      const feedB = chainOf(d, "beta").sources[0];
      expect(feedB).to.include({ status: "stale", price: "2500" });
      expect(feedB.stale_reason).to.contain("answeredInRound 3 < roundId 4");
      expect(chainOf(d, "beta").price).to.equal("2251.28125"); // median of 2002.5625 and 2500
      expect(d.aggregate.price).to.equal("2125.890625");
      expect(d.highest_deviation).to.include({ deviation_bps: "1253.59", threshold_bps: 50, exceeds_threshold: true });

      // The caller may tighten the max age.
      const tight = await pay({ pair: "ETH-USD", chains: ["alpha"], max_age_seconds: 7000 });
      expect(tight.body.deliverable.chains[0].sources[0].stale_reason).to.contain("7000 s allowed");

      // A chain whose every source is stale has no price and stays out of the aggregate...
      const btc = await pay({ pair: "BTC-USD" });
      expect(btc.status, JSON.stringify(btc.body)).to.equal(200);
      expect(chainOf(btc.body.deliverable, "beta")).to.include({ status: "stale", price: null, error: "every source on this chain is stale" });
      expect(btc.body.deliverable.aggregate).to.deep.equal({ method: "median of the chains' prices", price: "2000.5", chains: ["alpha"] });
      expect(btc.body.deliverable.highest_deviation).to.equal(null);
      // ...and a call where it is the only chain fails, charging nothing.
      const none = await pay({ pair: "BTC-USD", chains: ["beta"] });
      expect(none.status, JSON.stringify(none.body)).to.equal(503);
      expect(await up.balance()).to.equal(before - 3n * PRICE);
    } finally {
      await setRound(alpha, aggA, 9n, 2000_12345678n, nowSeconds() - 60n);
      await setRound(beta, aggB, 5n, 2010_00000000n, nowSeconds() - 30n);
    }
  });

  it("charges nothing when no chain answers for the pair (unreachable, wrong chain id)", async () => {
    await expectFailuresUncharged(up, SKU, [[{ pair: "LINK-USD" }, 503, "service_failed"]]);
  });

  it("refuses bad input before any challenge", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "pair"],
      [{ pair: "ETHUSD" }, "pair"],
      [{ pair: "DOGE-USD" }, "pair"],
      [{ pair: "ETH-USD", chains: ["alpha", "mars"] }, "chains.1"],
      [{ pair: "ETH-USD", chains: [] }, "chains"],
      [{ pair: "ETH-USD", max_age_seconds: 0 }, "max_age_seconds"],
      [{ pair: "ETH-USD", deviation_threshold_bps: -1 }, "deviation_threshold_bps"],
    ]);
  });

  it("reuses a chain's read within the cache window and names the RPC origins as its upstreams", async () => {
    const config = parsePriceSources(configText);
    const reader = new CrossChainReader(config, { allow: [alpha.hostPort, beta.hostPort], allowHttp: true }, 60_000);
    const first = await reader.read("ETH-USD", ["alpha"]);
    await setRound(alpha, aggA, 12n, 2100_00000000n, nowSeconds() - 5n);
    try {
      const again = await reader.read("ETH-USD", ["alpha"]);
      expect(first[0]!.cached).to.equal(false);
      expect(again[0]!.cached).to.equal(true);
      expect(again[0]!.readAt).to.deep.equal(first[0]!.readAt);
    } finally {
      await setRound(alpha, aggA, 13n, 2000_12345678n, nowSeconds() - 60n);
    }

    // A chain whose breaker is open is left out of the upstreams (reported unreachable instead),
    // unless every chain's is: then the call is refused before any charge.
    const breakers = new CircuitBreakers({ threshold: 1, cooldownMs: 60_000 });
    const engine = oracleCrossChainPrices(reader, breakers);
    const input = engine.input.parse({ pair: "ETH-USD" });
    const origins = config.chains.map((c) => new URL(c.rpc_url).origin);
    expect(await engine.upstreams!(input)).to.have.members([...new Set(origins)]);
    breakers.failure(config.chains[2]!.rpc_url);
    expect(await engine.upstreams!(input)).to.not.include(new URL(config.chains[2]!.rpc_url).origin);
    for (const c of config.chains) breakers.failure(c.rpc_url);
    expect(await engine.upstreams!(input)).to.have.members([...new Set(origins)]);
  });
});

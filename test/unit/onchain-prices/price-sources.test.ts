import { expect } from "chai";
import { loadPriceSources, parsePriceSources, PriceSourcesError } from "../../../src/onchain-prices/price-sources.js";

const CHAINS = `chains:\n  - { name: ethereum, chain_id: 1, rpc_url: "https://rpc.example" }\n`;
const FEED = "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419";

describe("price sources file (operator configuration of oracle.cross-chain-prices)", () => {
  it("ships a default file that validates: real mainnet chains and contracts with valid checksums", () => {
    const c = loadPriceSources("config/price-sources.yaml");
    expect(c.chains.map((x) => [x.name, x.chain_id])).to.deep.equal([["ethereum", 1], ["arbitrum", 42161], ["optimism", 10], ["base", 8453]]);
    expect(Object.keys(c.pairs)).to.include.members(["ETH-USD", "BTC-USD"]);
    const eth = c.pairs["ETH-USD"]!;
    expect(eth.find((s) => s.chain === "ethereum" && s.kind === "chainlink")!.address).to.equal(FEED);
    expect(new Set(eth.map((s) => s.chain)).size).to.be.at.least(4);
    for (const ch of c.chains) expect(ch.rpc_url).to.match(/^https:\/\//);
  });

  it("canonicalises pair keys and fills defaults", () => {
    const c = parsePriceSources(`${CHAINS}pairs:\n  eth/usd:\n    - { chain: ethereum, kind: chainlink, address: "${FEED}" }\n`);
    expect(Object.keys(c.pairs)).to.deep.equal(["ETH-USD"]);
    expect(c.pairs["ETH-USD"]![0]).to.include({ max_age_seconds: 3600 });
    expect(c.chains[0]).to.include({ timeout_ms: 5000 });
  });

  it("rejects a file with an unknown chain, a duplicate chain, a bad checksum, a pool without base_token or an unknown kind", () => {
    const bad: [string, RegExp][] = [
      [`${CHAINS}pairs:\n  ETH-USD:\n    - { chain: mars, kind: chainlink, address: "${FEED}" }\n`, /no chain named mars/],
      [`${CHAINS}  - { name: ethereum, chain_id: 2, rpc_url: "https://b.example" }\npairs: {}\n`, /listed twice/],
      [`${CHAINS}pairs:\n  ETH-USD:\n    - { chain: ethereum, kind: chainlink, address: "0x5F4eC3Df9cbd43714FE2740f5E3616155c5b8419" }\n`, /checksum/],
      [`${CHAINS}pairs:\n  ETH-USD:\n    - { chain: ethereum, kind: uniswap-v2, address: "${FEED}" }\n`, /base_token/],
      [`${CHAINS}pairs:\n  ETH-USD:\n    - { chain: ethereum, kind: curve, address: "${FEED}" }\n`, /kind/],
      [`chains:\n  - { name: ethereum, chain_id: 1, rpc_url: "ftp://rpc.example" }\npairs: {}\n`, /rpc_url/],
      [`${CHAINS}pairs:\n  ETHUSD:\n    - { chain: ethereum, kind: chainlink, address: "${FEED}" }\n`, /ETH-USD/],
      [`chains: [\n`, /not YAML/],
    ];
    for (const [text, why] of bad) expect(() => parsePriceSources(text), text).to.throw(PriceSourcesError, why);
    expect(() => loadPriceSources("config/no-such-file.yaml")).to.throw(PriceSourcesError, /cannot read/);
  });
});

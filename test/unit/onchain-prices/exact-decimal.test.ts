import { expect } from "chai";
import { isExactAt, median, parseDecimal, ratio, toDecimalString } from "../../../src/onchain-prices/exact-decimal.js";
import { chainlinkPrice, SourceError, v2Price, v3Price } from "../../../src/onchain-prices/source-readers.js";

const WETH = "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2" as const;
const USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48" as const;

describe("exact decimal prices from contract integers", () => {
  it("renders exact values exactly and rounds a non-terminating quotient half up at 18 decimals", () => {
    expect(toDecimalString(ratio(200012345678n, 10n ** 8n))).to.equal("2000.12345678");
    expect(toDecimalString(ratio(2000n))).to.equal("2000");
    expect(toDecimalString(ratio(1n, 3n))).to.equal("0.333333333333333333");
    expect(toDecimalString(ratio(2n, 3n))).to.equal("0.666666666666666667");
    expect(toDecimalString(ratio(-2n, 3n), 2)).to.equal("-0.67");
    expect(toDecimalString(ratio(1n, 10n ** 20n))).to.equal("0");
    expect(isExactAt(ratio(1n, 3n))).to.equal(false);
    expect(isExactAt(ratio(1n, 1024n))).to.equal(true);
    expect(toDecimalString(parseDecimal("97011.50"))).to.equal("97011.5");
    expect(() => parseDecimal("1e5")).to.throw(RangeError);
  });

  it("takes the median of an odd count, and the mean of the middle two of an even count", () => {
    expect(toDecimalString(median([ratio(3n), ratio(1n), ratio(2n)]))).to.equal("2");
    expect(toDecimalString(median([ratio(2010n), parseDecimal("2000.31172839")]))).to.equal("2005.155864195");
    expect(() => median([])).to.throw(RangeError);
  });

  it("prices a Uniswap v2 pair by reserves and token decimals, from either side", () => {
    const pool = { token0: USDC, token1: WETH, decimals0: 6, decimals1: 18, reserve0: 4_001_000n * 10n ** 6n, reserve1: 2_000n * 10n ** 18n };
    expect(toDecimalString(v2Price({ ...pool, baseToken: WETH }))).to.equal("2000.5");
    expect(toDecimalString(v2Price({ ...pool, baseToken: USDC }))).to.equal("0.000499875031242189"); // 2000/4001000, rounded
    expect(() => v2Price({ ...pool, reserve0: 0n, baseToken: WETH })).to.throw(SourceError, /no liquidity/);
  });

  it("prices a Uniswap v3 pool from sqrtPriceX96, inverting when the base asset is token1", () => {
    const q96 = 2n ** 96n;
    // USDC/WETH 0.05% pool shape: token0 USDC (6), token1 WETH (18); sqrtPriceX96 = 20000 * 2^96 -> ETH = 10^12 / 20000^2
    const pool = { token0: USDC, token1: WETH, decimals0: 6, decimals1: 18, sqrtPriceX96: 20_000n * q96 };
    expect(toDecimalString(v3Price({ ...pool, baseToken: WETH }))).to.equal("2500");
    expect(toDecimalString(v3Price({ ...pool, baseToken: USDC }))).to.equal("0.0004");
    expect(() => v3Price({ ...pool, sqrtPriceX96: 0n, baseToken: WETH })).to.throw(SourceError, /not initialized/);
  });

  it("refuses a non-positive Chainlink answer", () => {
    const round = { decimals: 8, description: null, roundId: 1n, startedAt: 1n, updatedAt: 1n, answeredInRound: 1n };
    expect(toDecimalString(chainlinkPrice({ ...round, answer: 1n }))).to.equal("0.00000001");
    expect(() => chainlinkPrice({ ...round, answer: 0n })).to.throw(SourceError, /not a positive price/);
    expect(() => chainlinkPrice({ ...round, answer: -5n })).to.throw(SourceError);
  });
});

import { expect } from "chai";
import { opportunities, type FeedBook } from "../../../src/market-data/arbitrage.js";
import { compareDecimal, subDecimal } from "../../../src/market-data/decimal.js";
import type { Venue } from "../../../src/market-data/venues.js";

// Cross-venue spreads from book tops, and the exact decimal arithmetic behind them.

const book = (venue: Venue, bid: string, ask: string, takerFeeBps: number, bidSize = "1.5", askSize = "2"): FeedBook => ({
  book: { venue, venueSymbol: venue, bid: { price: bid, size: bidSize }, ask: { price: ask, size: askSize }, endpoint: `https://${venue}`, fetchedAt: new Date(0), venueTime: null },
  takerFeeBps,
});

describe("market-data arbitrage", () => {
  it("subtracts and compares venue decimals exactly", () => {
    expect(subDecimal("100.50", "100.00")).to.equal("0.5");
    expect(subDecimal("97010.01", "97012.35")).to.equal("-2.34");
    expect(subDecimal("1", "0.000001")).to.equal("0.999999");
    expect(subDecimal("0.1", "0.10")).to.equal("0");
    expect(subDecimal("0.3", "0.1")).to.equal("0.2"); // a float would say 0.19999999999999998
    expect([compareDecimal("1.0", "1"), compareDecimal("1.01", "1.1"), compareDecimal("2", "1.99999999")]).to.deep.equal([0, -1, 1]);
  });

  it("computes every ordered venue pair: gross, entry and exit spreads net of both taker fees", () => {
    const all = opportunities([book("coinbase", "100.00", "100.10", 60), book("kraken", "100.80", "100.90", 40, "0.25"), book("binance", "99.90", "100.00", 10)]);
    expect(all).to.have.length(6);
    const best = all[0]!;
    // buy Binance at 100.00, sell Kraken at 100.80: 80 bps gross, 50 bps of fees
    expect(best).to.deep.equal({
      buy_venue: "binance",
      sell_venue: "kraken",
      buy_ask: "100.00",
      sell_bid: "100.80",
      gross_spread: "0.8",
      gross_spread_bps: 80,
      taker_fees_bps: 50,
      entry_spread_net_bps: 30,
      exit_spread_gross_bps: Math.round(((99.9 - 100.9) / 100.9) * 1e6) / 100,
      exit_spread_net_bps: Math.round(((99.9 - 100.9) / 100.9 * 1e4 - 50) * 100) / 100,
      round_trip_net_bps: Math.round((30 + (99.9 - 100.9) / 100.9 * 1e4 - 50) * 100) / 100,
      executable_size: "0.25",
      profitable: true,
    });
    expect(all.map((o) => o.entry_spread_net_bps)).to.deep.equal([...all.map((o) => o.entry_spread_net_bps)].sort((a, b) => b - a));
  });

  it("flags a spread that does not cover the fees as unprofitable", () => {
    const [best] = opportunities([book("kraken", "100.50", "100.60", 40), book("binance", "99.90", "100.00", 10)]);
    expect(best).to.include({ buy_venue: "binance", sell_venue: "kraken", gross_spread_bps: 50, taker_fees_bps: 50, entry_spread_net_bps: 0, profitable: false });
  });
});

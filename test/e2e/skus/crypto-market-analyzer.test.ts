import { expect } from "chai";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { venuesAndNewsForSuite } from "../../fixtures/market-news-upstream.js";
import { newsServer } from "../../fixtures/news-feeds.js";
import { expectBadInputRefused, type Json } from "../../fixtures/sku-calls.js";
import { alternatingCloses, candlesFromCloses, VenueEmulator } from "../../fixtures/venue-emulator.js";
import { analyzeHistory } from "../../../src/market-data/history-analysis.js";
import { MarketAnalyzerOutput } from "../../../src/skus/crypto-market-analyzer.js";

const SKU = "crypto.market-analyzer";
const PRICE = 20_000n; // 0.02 USDC
const DAY = 86_400;

const btcDaily = candlesFromCloses(alternatingCloses(60_000, 120, 0.03, 0.02), DAY);

const emulator = new VenueEmulator({
  tickers: { coinbase: { "BTC-USD": "97011.50", "NEW-USD": "1.25" } },
  books: { coinbase: { "BTC-USD": { bid: "97010.01", bidSize: "0.5", ask: "97012.35", askSize: "1.25" }, "NEW-USD": { bid: "1.24", bidSize: "100", ask: "1.26", askSize: "100" } } },
  candles: { "BTC-USD": { [DAY]: btcDaily }, "NEW-USD": { [DAY]: btcDaily.slice(-5) } },
});

describe("crypto.market-analyzer: market data, indicators and news sentiment for a ticker", function () {
  this.timeout(60_000);
  const up = venuesAndNewsForSuite(emulator, newsServer(), { PRICE_CACHE_SECONDS: "0" });
  afterEach(() => emulator.faults.clear());
  const pay = (body: unknown) => up.payJson(SKU, body);

  it("reads the ticker, the book top and the candles, computes the indicators and scores the asset's news, citing every read", async () => {
    const before = await up.balance();
    const res = await pay({ ticker: "BTC" });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const d = res.body.deliverable;
    expect(MarketAnalyzerOutput.safeParse(d).success).to.equal(true);
    expect(d).to.include({ pair: "BTC-USD", venue: "coinbase" });
    expect(d.market).to.deep.include({ venue_symbol: "BTC-USD", price: "97011.50", bid: "97010.01", ask: "97012.35" });
    expect(d.market.book).to.deep.equal({ bid: { price: "97010.01", size: "0.5" }, ask: { price: "97012.35", size: "1.25" }, spread: "2.34", spread_bps: 0.24, mid: 97011.18 });
    expect(d.market.sources.ticker).to.deep.include({ venue: "coinbase", endpoint: `${up.base}/coinbase/products/BTC-USD/ticker`, cached: false });
    expect(d.market.sources.book.endpoint).to.equal(`${up.base}/coinbase/products/BTC-USD/book?level=1`);

    // The indicators are those of the served closed candles (the one in progress never counts).
    const { source, venue, venue_symbol, lookback_requested, ...figures } = d.indicators;
    // Coinbase sends candles as JSON numbers: 60000.00 arrives as 60000.
    const asSent = btcDaily.map((c) => ({ ...c, open: String(Number(c.open)), high: String(Number(c.high)), low: String(Number(c.low)), close: String(Number(c.close)), volume: String(Number(c.volume)) }));
    expect(figures).to.deep.equal(analyzeHistory(asSent, "1d"));
    expect([venue, venue_symbol, lookback_requested]).to.deep.equal(["coinbase", "BTC-USD", 120]);
    expect(source.endpoint).to.equal(`${up.base}/coinbase/products/BTC-USD/candles?granularity=86400`);
    expect(d.indicators.regime.label).to.equal("uptrend");

    // News: stories naming bitcoin or BTC, scored by the lexicon.
    const s = d.sentiment;
    expect(s).to.deep.include({ engine: "lexicon:wink-sentiment (AFINN-165)", query: "bitcoin OR BTC", stories: 6, label: "negative", counts: { positive: 2, neutral: 1, negative: 3 }, feeds_read: 4 });
    expect(s.headlines.map((h: Json) => `${h.label}: ${h.title}`)).to.deep.equal([
      "positive: Bitcoin ETF inflows surge to record as investors cheer",
      "negative: Central bank warns bitcoin bubble could crash markets",
      "negative: Bitcoin exchange hacked; users fear losses in fraud",
      "negative: BTC rally stalls as traders worry about regulation",
      "neutral: Bitcoin miners publish quarterly report",
      "positive: Open-source bitcoin wallet wins award",
    ]);
    expect(s.headlines[0].source).to.deep.include({ name: "Alpha Crypto", domain: "alpha-crypto.example", feed_url: `${up.base}/feeds/alpha.xml` });
    expect(s.feeds_failed.map((f: Json) => f.domain)).to.deep.equal(["down-news.example", "broken-times.example", "busy-wire.example"]);
    expect(d.summary).to.contain("BTC-USD on Coinbase Exchange: last 97011.50, spread 0.24 bps");
    expect(d.summary).to.contain("news sentiment negative");
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("charges nothing when the venue fails (503), history is too short (409) or every news feed fails (503)", async () => {
    const before = await up.balance();
    emulator.fault("coinbase", "book", "BTC-USD", "rate_limit");
    const limited = await pay({ pair: "BTC-USD", lookback: 60 });
    expect(limited.status).to.equal(503);
    emulator.faults.clear();
    const short = await pay({ ticker: "NEW" });
    expect(short.status).to.equal(409);
    expect(short.body.error.code).to.equal("insufficient_history");
    const noFeeds = await pay({ ticker: "BTC", news_channels: ["general"] });
    expect(noFeeds.status).to.equal(503);
    expect(await up.balance()).to.equal(before);
  });

  it("refuses bad input before any challenge and charges nothing (400 naming the field)", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "pair"],
      [{ ticker: "B" }, "ticker"],
      [{ pair: "BTC-USD", interval: "2h" }, "interval"],
      [{ pair: "BTC-USD", lookback: 5 }, "lookback"],
      [{ pair: "BTC-USD", venue: "ftx" }, "venue"],
      [{ pair: "BTC-USD", news_channels: ["sports"] }, "news_channels.0"],
    ]);
  });
});

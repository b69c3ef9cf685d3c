import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { DEFAULT_TAKER_FEE_BPS } from "../market-data/arbitrage.js";
import type { MarketReader } from "../market-data/market-reader.js";
import type { FeedReader } from "../news/feed-reader.js";
import { newsSentiment } from "./market-news-sentiment.js";
import { oracleComprehensiveReport } from "./oracle-comprehensive-report.js";
import { oracleHistoricalAnalysis } from "./oracle-historical-analysis.js";
import { oracleMarketArbitrage } from "./oracle-market-arbitrage.js";
import { oracleVolatilityMonitor } from "./oracle-volatility-monitor.js";

// The market engines (issue 7). They share one MarketReader with the crypto engines, so one short cache
// of venue reads serves them all, and the comprehensive report's news sentiment uses the shared feed reader.

export function marketEngines(outbound: OutboundEngines, reader: MarketReader, feeds: FeedReader): SkuHandler<any>[] {
  const fees = outbound.config.marketTakerFeeBps ?? DEFAULT_TAKER_FEE_BPS;
  return [oracleMarketArbitrage(reader, fees), oracleVolatilityMonitor(reader), oracleHistoricalAnalysis(reader), oracleComprehensiveReport(reader, fees, newsSentiment(feeds))];
}

import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { loadFeeds } from "../news/feed-config.js";
import { FeedReader } from "../news/feed-reader.js";
import type { MarketReader } from "../market-data/market-reader.js";
import { researchTopicNewsScanner } from "./research-topic-news-scanner.js";
import { researchTopicSentimentAnalyzer } from "./research-topic-sentiment-analyzer.js";
import { oracleSentimentAnalysis } from "./oracle-sentiment-analysis.js";
import { cryptoMarketAnalyzer } from "./crypto-market-analyzer.js";
import { cryptoInvestmentPlays } from "./crypto-investment-plays.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import { llmSentimentEngine } from "../sentiment/llm-sentiment.js";

// The news engines (issue 7); each is registered here once it is real. They share one feed reader
// (and so one feed cache) over the curated feeds file. The news and sentiment engines declare no
// `upstreams`: a scan reads dozens of independent outlets and one failing outlet must not refuse the
// call; the per-origin breakers still apply through the safe fetcher, so an outlet whose breaker is
// open fails fast and is listed among the failed feeds. The crypto engines declare their venue.

/** The one feed reader (one cache) over the curated feeds file, shared by every engine that reads news. */
export function newsFeedReader(outbound: OutboundEngines): FeedReader {
  const { news } = outbound.config;
  return new FeedReader(loadFeeds(news.feedsFile), outbound.policy, {
    timeoutMs: news.feedTimeoutMs,
    maxBytes: news.feedMaxBytes,
    cacheMs: news.cacheMs,
    concurrency: news.concurrency,
    userAgent: "svc-news/1.0 (feed reader)",
  });
}

/** `llm`: when configured, the sentiment engines score with it instead of the lexicon. */
export function newsEngines(reader: FeedReader, market: MarketReader, llm?: LlmEngine): SkuHandler<any>[] {
  return [
    researchTopicNewsScanner(reader),
    researchTopicSentimentAnalyzer(reader, llm ? llmSentimentEngine(llm, "research") : undefined),
    oracleSentimentAnalysis(reader, llm ? llmSentimentEngine(llm, "oracle") : undefined),
    cryptoMarketAnalyzer(market, reader),
    cryptoInvestmentPlays(market, reader),
  ];
}

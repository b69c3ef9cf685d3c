import type { DataSource } from "typeorm";
import type { Config } from "../config.js";
import type { ChainRuntime } from "../chain/chain-runtime.js";
import type { Logger } from "../platform/log.js";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { SkuHandler } from "./sku-handler.js";
import { opsLinkIntegrity } from "./ops-link-integrity.js";
import { dataWebExtract } from "./data-web-extract.js";
import { oraclePriceFeed } from "./oracle-price-feed.js";
import type { VenueClient } from "../market-data/venues.js";
import type { EdgarClient } from "../filings/edgar-client.js";
import { dataSecEdgarFiling } from "./data-sec-edgar-filing.js";
import type { AgentDirectory } from "./subject.js";
import { arbitrationDisputeSettlement } from "./arbitration-dispute-settlement.js";
import { agentTrustBadge } from "./agent-trust-badge.js";
import { agentPrehireCheck } from "./agent-prehire-check.js";
import { attestationSingleUseSeal } from "./attestation-single-use-seal.js";
import { reputationLookup, type ReputationOf } from "./reputation-lookup.js";
import { marketEngines } from "./market-engines.js";
import { chainEngines } from "./chain-engines.js";
import { newsEngines, newsFeedReader } from "./news-engines.js";
import { MarketReader } from "../market-data/market-reader.js";
import { webEngines } from "./web-engines.js";
import { registryEngines } from "./registry-engines.js";
import { judgmentEngines } from "./judgment-engines.js";
import type { LlmEngine } from "../llm/llm-engine.js";

/** What engines that reach outside (the web, exchanges, chains) are built from on a full server. */
export interface OutboundEngines {
  config: Config;
  policy: SafeFetchPolicy;
  venues: VenueClient;
  priceCacheMs: number;
  edgar: EdgarClient;
  ds: DataSource;
  chain: ChainRuntime;
  log: Logger;
  /** The language model engine, when the operator configured one (LLM_BASE_URL). */
  llm: LlmEngine | undefined;
  /** The agent registry and the reputation engine, for judgment engines about registered agents (ops.due-diligence-scan). */
  registry?: { directory: AgentDirectory; reputationOf: ReputationOf };
}

/** Every SKU with a real engine on this deployment; the rest are not sold (409 `service_unavailable`). */
export function skuHandlers(directory: AgentDirectory, reputationOf?: ReputationOf, outbound?: OutboundEngines): Map<string, SkuHandler<any>> {
  // One venue-read cache and one feed cache for every engine that reads markets or news.
  const market = outbound && new MarketReader(outbound.venues, outbound.priceCacheMs);
  const feeds = outbound && newsFeedReader(outbound);
  const handlers: SkuHandler<any>[] = [
    // Engines that reach outside run only with the operator's fetch policy.
    ...(outbound
      ? [
          // Link checks report failing links as findings: they must not trip the breakers.
          opsLinkIntegrity({ ...outbound.policy, breakers: undefined }),
          dataWebExtract(outbound.policy),
          oraclePriceFeed(outbound.venues, outbound.priceCacheMs),
          dataSecEdgarFiling(outbound.edgar),
          ...marketEngines(outbound, market!, feeds!),
          ...chainEngines(outbound),
          ...newsEngines(feeds!, market!, outbound.llm),
          ...webEngines(outbound),
          ...judgmentEngines(outbound),
        ]
      : []),
    agentTrustBadge(directory, reputationOf),
    agentPrehireCheck(directory, reputationOf),
    attestationSingleUseSeal(),
    reputationLookup(directory, reputationOf),
    arbitrationDisputeSettlement(),
    ...registryEngines(directory, reputationOf, outbound),
  ];
  return new Map(handlers.map((h) => [h.skuId, h]));
}

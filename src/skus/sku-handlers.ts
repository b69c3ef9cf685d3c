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

/** Every SKU with a real engine on this deployment; the rest are not sold (409 `service_unavailable`). */
export interface OutboundEngines {
  policy: SafeFetchPolicy;
  venues: VenueClient;
  priceCacheMs: number;
  edgar: EdgarClient;
}

export function skuHandlers(directory: AgentDirectory, reputationOf?: ReputationOf, outbound?: OutboundEngines): Map<string, SkuHandler<any>> {
  const handlers: SkuHandler<any>[] = [
    // Engines that reach outside run only with the operator's fetch policy.
    ...(outbound ? [opsLinkIntegrity(outbound.policy), dataWebExtract(outbound.policy), oraclePriceFeed(outbound.venues, outbound.priceCacheMs), dataSecEdgarFiling(outbound.edgar)] : []),
    agentTrustBadge(directory, reputationOf),
    agentPrehireCheck(directory, reputationOf),
    attestationSingleUseSeal(),
    reputationLookup(directory, reputationOf),
    arbitrationDisputeSettlement(),
  ];
  return new Map(handlers.map((h) => [h.skuId, h]));
}

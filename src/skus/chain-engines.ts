import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { CrossChainReader } from "../onchain-prices/chain-reader.js";
import { loadPriceSources } from "../onchain-prices/price-sources.js";
import { oracleCrossChainPrices } from "./oracle-cross-chain-prices.js";
import { oracleAlertGenerator } from "./oracle-alert-generator.js";

// The chain engines (issue 7); each is registered here once it is real.

export function chainEngines(outbound: OutboundEngines): SkuHandler<any>[] {
  const { config } = outbound;
  // A bad price sources file stops the server at start, like any other invalid setting.
  const reader = new CrossChainReader(loadPriceSources(config.priceSourcesFile), outbound.policy, outbound.priceCacheMs);
  return [
    oracleCrossChainPrices(reader, outbound.policy.breakers),
    // The alert scheduler itself runs with the server (src/server.ts), over the same VenueClient.
    oracleAlertGenerator(outbound.ds, outbound.venues, config.marketVenueUrls, config.alerts),
  ];
}

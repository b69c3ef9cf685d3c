import { YouTubeClient } from "../video/youtube-client.js";
import { contentYoutubeResearch } from "./content-youtube-research.js";
import { dataBusinessRegistry } from "./data-business-registry.js";
import { researchTopicDeepResearcher } from "./research-topic-deep-researcher.js";
import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";

// The web engines (issue 7); each is registered here once it is real.

export function webEngines(outbound: OutboundEngines): SkuHandler<any>[] {
  return [
    researchTopicDeepResearcher(outbound.policy, outbound.llm),
    dataBusinessRegistry(outbound.policy),
    contentYoutubeResearch(new YouTubeClient(outbound.config.youtubeUrl, outbound.policy)),
  ];
}

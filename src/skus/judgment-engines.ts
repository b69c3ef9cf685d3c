import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";

// The judgment engines (issue 8): panels, audits, vetting, translation. Engines that cannot run honestly
// without a language model are registered only when `outbound.llm` is configured.

export function judgmentEngines(_outbound: OutboundEngines): SkuHandler<any>[] {
  return [];
}

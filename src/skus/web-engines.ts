import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";

// The web engines (issue 7); each is registered here once it is real.

export function webEngines(_outbound: OutboundEngines): SkuHandler<any>[] {
  return [];
}

import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";

// The market engines (issue 7); each is registered here once it is real.

export function marketEngines(_outbound: OutboundEngines): SkuHandler<any>[] {
  return [];
}

import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import type { AgentDirectory } from "./subject.js";
import type { ReputationOf } from "./reputation-lookup.js";

// The registry-derived engines (issue 7) beyond the first four; each is registered here once it is real.
// `outbound` is absent on deployments built without the fetch policy (some tests).

export function registryEngines(_directory: AgentDirectory, _reputationOf?: ReputationOf, _outbound?: OutboundEngines): SkuHandler<any>[] {
  return [];
}

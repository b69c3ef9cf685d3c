import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { SkuHandler } from "./sku-handler.js";
import { opsLinkIntegrity } from "./ops-link-integrity.js";
import type { AgentDirectory } from "./subject.js";
import { arbitrationDisputeSettlement } from "./arbitration-dispute-settlement.js";
import { agentTrustBadge } from "./agent-trust-badge.js";
import { agentPrehireCheck } from "./agent-prehire-check.js";
import { attestationSingleUseSeal } from "./attestation-single-use-seal.js";
import { reputationLookup, type ReputationOf } from "./reputation-lookup.js";

/** Every SKU with a real engine on this deployment; the rest are not sold (409 `service_unavailable`). */
export function skuHandlers(directory: AgentDirectory, reputationOf?: ReputationOf, fetchPolicy?: SafeFetchPolicy): Map<string, SkuHandler<any>> {
  const handlers: SkuHandler<any>[] = [
    ...(fetchPolicy ? [opsLinkIntegrity(fetchPolicy)] : []), // outbound engines only with the operator's fetch policy
    agentTrustBadge(directory, reputationOf),
    agentPrehireCheck(directory, reputationOf),
    attestationSingleUseSeal(),
    reputationLookup(directory, reputationOf),
    arbitrationDisputeSettlement(),
  ];
  return new Map(handlers.map((h) => [h.skuId, h]));
}

import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { identityChain } from "../trust-evidence/identity-chain.js";
import { securityConformanceCheck } from "./security-conformance-check.js";
import { securityInjectionResilience } from "./security-injection-resilience.js";
import { opsDueDiligenceScan } from "./ops-due-diligence-scan.js";

// The deterministic checks of issue 8 (no language model): stated-posture conformance, the injection
// battery against a counterparty agent, and the due-diligence pre-screen (sold only where the registry
// and its reputation engine are wired in).

export function checkEngines(outbound: OutboundEngines): SkuHandler<any>[] {
  const chain = identityChain(outbound.chain, outbound.config.identityRegistryAddress);
  return [
    securityConformanceCheck(),
    securityInjectionResilience(outbound.policy),
    ...(outbound.registry ? [opsDueDiligenceScan(outbound.registry.directory, outbound.registry.reputationOf, outbound.policy, chain)] : []),
  ];
}

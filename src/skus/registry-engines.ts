import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import type { AgentDirectory } from "./subject.js";
import type { ReputationOf } from "./reputation-lookup.js";
import { identityChain } from "../trust-evidence/identity-chain.js";
import { procurementTrustLayer } from "./procurement-trust-layer.js";
import { finopsTokenSpendAudit } from "./finops-token-spend-audit.js";
import { securityAuditAttestation } from "./security-audit-attestation.js";
import { securityProcessAttestation } from "./security-process-attestation.js";
import { securityCardVerify } from "./security-card-verify.js";
import { socialVerifiedIntroduction } from "./social-verified-introduction.js";

// The registry-derived engines (issue 7) beyond the first four; each is registered here once it is real.
// `outbound` is absent on deployments built without the fetch policy (some tests): the engines that fetch
// or must read the chain (card-verify, verified_introduction) are only sold with it; the trust layer then
// reports a linked identity as recorded, unchecked on-chain.

export function registryEngines(directory: AgentDirectory, reputationOf?: ReputationOf, outbound?: OutboundEngines): SkuHandler<any>[] {
  const chain = outbound && identityChain(outbound.chain, outbound.config.identityRegistryAddress);
  return [
    procurementTrustLayer(directory, reputationOf, chain),
    finopsTokenSpendAudit(),
    securityAuditAttestation(directory),
    securityProcessAttestation(directory),
    ...(outbound && chain
      ? [securityCardVerify(directory, reputationOf, outbound.policy, chain, outbound.config.publicBaseUrl), socialVerifiedIntroduction(directory, chain)]
      : []),
  ];
}

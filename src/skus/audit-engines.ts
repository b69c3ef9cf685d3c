import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { securityEnterpriseAudit } from "./security-enterprise-audit.js";
import { securityMultiAgentAudit } from "./security-multi-agent-audit.js";

// The audits (issue 8): static auditors over the buyer's artifacts; they run without a language model
// and add a labelled LLM review when one is configured.
export function auditEngines(outbound: OutboundEngines): SkuHandler<any>[] {
  return [securityEnterpriseAudit(outbound.llm), securityMultiAgentAudit(outbound.llm)];
}

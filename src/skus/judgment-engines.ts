import type { SkuHandler } from "./sku-handler.js";
import type { OutboundEngines } from "./sku-handlers.js";
import { deliberationMultiAgentDebate } from "./deliberation-multi-agent-debate.js";
import { procurementCouncil } from "./procurement-council.js";
import { procurementVendorVetting } from "./procurement-vendor-vetting.js";
import { translationZhEn } from "./translation-zh-en.js";
import { checkEngines } from "./check-engines.js";
import { auditEngines } from "./audit-engines.js";

// The judgment engines (issue 8): panels, audits, vetting, translation. Engines that cannot run honestly
// without a language model are registered only when `outbound.llm` is configured.

export function judgmentEngines(_outbound: OutboundEngines): SkuHandler<any>[] {
  return [
    ...(_outbound.llm ? [deliberationMultiAgentDebate(_outbound.llm), procurementCouncil(_outbound.llm), procurementVendorVetting(_outbound.llm)] : []),
    ...(_outbound.llm ? [translationZhEn(_outbound.llm)] : []),
    ...checkEngines(_outbound),
    ...auditEngines(_outbound),
  ];
}

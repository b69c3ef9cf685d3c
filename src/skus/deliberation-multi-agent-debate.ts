import type { LlmEngine } from "../llm/llm-engine.js";
import { PanelInput, PanelOutput, runPanel } from "../panels/panel-deliverable.js";
import { DEBATE_ROLE_ORDER } from "../panels/roles.js";
import type { SkuHandler } from "./sku-handler.js";

// deliberation.multi-agent-debate (async): a panel of 5 to 11 language-model panelists with distinct
// roles deliberates the buyer's question: independent first opinions, rebuttal rounds, a structured
// vote and a forced decision (src/panels/). Only sold when a language model is configured.

export const DEBATE_FAMILY = "deliberation";

export function deliberationMultiAgentDebate(llm: LlmEngine): SkuHandler<PanelInput> {
  return {
    skuId: "deliberation.multi-agent-debate",
    poweredBy: `svc-panels/debate (${llm.modelFor(DEBATE_FAMILY)})`,
    input: PanelInput,
    output: PanelOutput,
    // An open breaker on the model provider refuses the call before any charge.
    upstreams: () => (llm.upstream ? [llm.upstream] : []),
    run: (input, ctx) => runPanel({ llm, family: DEBATE_FAMILY, setting: "a question", roleOrder: DEBATE_ROLE_ORDER, idPrefix: "dlb" }, input, ctx.paymentId, ctx.now),
  };
}

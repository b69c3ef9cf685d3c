import type { LlmSettings } from "./llm-config.js";

/**
 * Internal cost of a completion in micro-USD: prompt and completion tokens at the operator's prices per
 * million tokens, rounded up to a whole micro-USD (cost is never understated).
 */
export function costMicroUsd(promptTokens: number, completionTokens: number, prices: Pick<LlmSettings, "priceInputMicroUsdPerMTok" | "priceOutputMicroUsdPerMTok">): bigint {
  const scaled = BigInt(promptTokens) * prices.priceInputMicroUsdPerMTok + BigInt(completionTokens) * prices.priceOutputMicroUsdPerMTok;
  return (scaled + 999_999n) / 1_000_000n;
}

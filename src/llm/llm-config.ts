import { usdToAtomic } from "../platform/money.js";

// The language model settings (LLM_* variables). No LLM_BASE_URL: no model, and the SKUs that cannot run
// honestly without one are not sold.

export interface LlmSettings {
  /** Base URL of an OpenAI-compatible API, up to and including its version (`https://api.openai.com/v1`, `http://localhost:11434/v1`). */
  baseUrl: string;
  /** Bearer key; omitted for servers that take none (Ollama, llama.cpp, a private vLLM). Never logged. */
  apiKey: string | undefined;
  /** The model used by every SKU family without an override. */
  model: string;
  /** Per-family model overrides (`translation` -> `qwen2.5:14b`). */
  models: Record<string, string>;
  /** Deadline of one HTTP request (the whole answer). */
  timeoutMs: number;
  /** Retries of one request after a 429, a 5xx, a timeout or a network error (exponential backoff, Retry-After honored). */
  maxRetries: number;
  /** Requests in flight at once from this process. */
  concurrency: number;
  /** Operator's prices, micro-USD per million tokens (internal cost accounting). */
  priceInputMicroUsdPerMTok: bigint;
  priceOutputMicroUsdPerMTok: bigint;
}

/** `family=model` pairs separated by commas (model names may hold `:`, `/`, `.`, `-`). */
export const LLM_MODELS_PATTERN = /^\s*(?:[a-z][a-z0-9_.-]*\s*=\s*[^\s,=]+\s*(?:,\s*[a-z][a-z0-9_.-]*\s*=\s*[^\s,=]+\s*)*)?$/;

export function parseModelOverrides(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [family, model] = pair.split("=").map((s) => s.trim());
    out[family!] = model!;
  }
  return out;
}

export interface LlmEnv {
  LLM_BASE_URL?: string;
  LLM_API_KEY?: string;
  LLM_MODEL?: string;
  LLM_MODELS: string;
  LLM_TIMEOUT_MS: number;
  LLM_MAX_RETRIES: number;
  LLM_CONCURRENCY: number;
  LLM_PRICE_INPUT_PER_MTOK_USD: string;
  LLM_PRICE_OUTPUT_PER_MTOK_USD: string;
}

/** The settings from validated env, or undefined when no LLM is configured. */
export function llmSettings(e: LlmEnv): LlmSettings | undefined {
  if (!e.LLM_BASE_URL) return undefined;
  return {
    baseUrl: e.LLM_BASE_URL.replace(/\/+$/, ""),
    apiKey: e.LLM_API_KEY || undefined,
    model: e.LLM_MODEL!,
    models: parseModelOverrides(e.LLM_MODELS),
    timeoutMs: e.LLM_TIMEOUT_MS,
    maxRetries: e.LLM_MAX_RETRIES,
    concurrency: e.LLM_CONCURRENCY,
    priceInputMicroUsdPerMTok: usdToAtomic(e.LLM_PRICE_INPUT_PER_MTOK_USD),
    priceOutputMicroUsdPerMTok: usdToAtomic(e.LLM_PRICE_OUTPUT_PER_MTOK_USD),
  };
}

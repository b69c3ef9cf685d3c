import type { z } from "zod";

// The one interface every SKU uses to reach a language model. Implementations (an OpenAI-compatible
// chat-completions client) validate the model's JSON answer against the caller's schema, repair once,
// account tokens and internal cost per job, and bound concurrency. Engines never see provider details.

export interface LlmMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface StructuredRequest<T> {
  /** The SKU family (`deliberation`, `procurement`, `security`, `translation`, `research`, `oracle`...): picks the model. */
  family: string;
  /** Who pays for the tokens: the job or payment id the usage is accounted to (internal, never public). */
  accountTo: string;
  /** A short name of the expected object, given to the model with its JSON Schema. */
  schemaName: string;
  /** The answer's shape; an answer outside it gets one repair request, then the call fails. */
  schema: z.ZodType<T>;
  messages: LlmMessage[];
  temperature?: number;
  maxTokens?: number;
}

export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  /** Internal cost in micro-USD (integer), from the operator's configured prices; never on public routes. */
  costMicroUsd: bigint;
}

export interface StructuredAnswer<T> {
  value: T;
  /** The model that answered, as the provider names it. */
  model: string;
  usage: LlmUsage;
  /** Whether a repair request was needed to get a valid answer. */
  repaired: boolean;
}

export interface LlmEngine {
  /** The provider's origin (`https://api.openai.com`): an LLM SKU lists it in `upstreams()` for the circuit breaker. */
  readonly upstream?: string;
  /** The model configured for a family (for `powered_by` and disclosures). */
  modelFor(family: string): string;
  /** One structured completion; throws when no valid answer is obtained (the call then fails uncharged or refunds). */
  complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>>;
}

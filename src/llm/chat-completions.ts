import { safeRequest, UnsafeUrlError, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { CircuitOpenError } from "../policy/circuit-breakers.js";
import type { LlmSettings } from "./llm-config.js";
import type { LlmMessage } from "./llm-engine.js";
import { Semaphore } from "./semaphore.js";

// The HTTP side of an OpenAI-compatible chat-completions API (hosted APIs, vLLM, Ollama, llama.cpp
// server): one POST {base}/chat/completions through the safe fetcher, bounded per process by a
// semaphore, retried after a 429, a 5xx, a timeout or a network error with exponential backoff (the
// server's Retry-After wins when it sends one). The key, when set, goes only in the Authorization header.

export interface ChatRequest {
  model: string;
  messages: LlmMessage[];
  temperature: number;
  maxTokens: number;
}

export interface ChatCompletion {
  /** choices[0].message.content ("" when the server sent none). */
  content: string;
  /** The model as the server named it (the requested one when it did not). */
  model: string;
  finishReason: string | null;
  promptTokens: number;
  completionTokens: number;
}

/** A request that got no completion (after its retries, for the retryable kinds). */
export class LlmRequestError extends Error {
  constructor(message: string, readonly status: number | undefined, readonly retryable: boolean, readonly retryAfterMs?: number) {
    super(message);
  }
}

/** First backoff delay, its growth cap, and the longest Retry-After honored. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 20_000;
export const RETRY_AFTER_MAX_MS = 60_000;
/** A completion larger than this is refused (it would be cut). */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export type Sleep = (ms: number) => Promise<void>;
const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After as delta-seconds or an HTTP date, in ms (capped), or undefined. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const ms = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(RETRY_AFTER_MAX_MS, Math.max(0, ms)) : undefined;
}

/** The wait before retry number `attempt` (0-based): the server's Retry-After, else base·2^attempt with up to 25% jitter. */
export function backoffMs(attempt: number, serverSaid: number | undefined, random = Math.random): number {
  if (serverSaid !== undefined) return serverSaid;
  const exp = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.round(exp * (1 + random() * 0.25));
}

interface ApiAnswer {
  model?: unknown;
  choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }>;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  error?: { message?: unknown } | string;
}

function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as ApiAnswer;
    const e = parsed.error;
    if (typeof e === "string") return e;
    if (e && typeof e.message === "string") return e.message;
  } catch {
    // not JSON: the body itself (trimmed) says what happened
  }
  return body.replace(/\s+/g, " ").trim().slice(0, 200) || "(empty body)";
}

const tokens = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);

export class ChatCompletionsClient {
  private readonly semaphore: Semaphore;
  readonly endpoint: string;

  constructor(
    private readonly settings: LlmSettings,
    private readonly policy: SafeFetchPolicy,
    private readonly sleep: Sleep = realSleep,
  ) {
    this.semaphore = new Semaphore(settings.concurrency);
    this.endpoint = `${settings.baseUrl}/chat/completions`;
  }

  /** One completion, retried as documented; throws LlmRequestError when none was obtained. */
  async complete(req: ChatRequest): Promise<ChatCompletion> {
    for (let attempt = 0; ; attempt++) {
      try {
        // The permit covers the request only, not the backoff wait.
        return await this.semaphore.use(() => this.once(req));
      } catch (err) {
        const e = err instanceof LlmRequestError ? err : new LlmRequestError(String((err as Error).message), undefined, false);
        if (!e.retryable || attempt >= this.settings.maxRetries) {
          if (attempt > 0) e.message = `${e.message} (after ${attempt + 1} attempts)`;
          throw e;
        }
        await this.sleep(backoffMs(attempt, e.retryAfterMs));
      }
    }
  }

  private async once(req: ChatRequest): Promise<ChatCompletion> {
    try {
      return await this.exchange(req);
    } catch (err) {
      // A provider may echo the key in an error; it never leaves here (errors reach logs and job records).
      const key = this.settings.apiKey;
      if (key && err instanceof Error && err.message.includes(key)) err.message = err.message.split(key).join("[redacted]");
      throw err;
    }
  }

  private async exchange(req: ChatRequest): Promise<ChatCompletion> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.settings.apiKey) headers.authorization = `Bearer ${this.settings.apiKey}`;
    const body = JSON.stringify({
      model: req.model,
      messages: req.messages,
      temperature: req.temperature,
      max_tokens: req.maxTokens,
      response_format: { type: "json_object" },
    });
    let res;
    try {
      res = await safeRequest(this.endpoint, { method: "POST", headers, body, timeoutMs: this.settings.timeoutMs, maxBytes: MAX_RESPONSE_BYTES }, this.policy);
    } catch (err) {
      // A refused address or an open breaker will not change on a retry; timeouts and network errors may.
      const permanent = err instanceof UnsafeUrlError || err instanceof CircuitOpenError;
      throw new LlmRequestError(`language model request failed: ${(err as Error).message}`, undefined, !permanent);
    }
    if (res.status === 429 || res.status === 408 || res.status >= 500) {
      throw new LlmRequestError(`language model answered ${res.status}: ${errorText(res.body)}`, res.status, true, retryAfterMs(res.headers["retry-after"]));
    }
    if (res.status < 200 || res.status >= 300) {
      throw new LlmRequestError(`language model answered ${res.status}: ${errorText(res.body)}`, res.status, false);
    }
    let parsed: ApiAnswer;
    try {
      parsed = JSON.parse(res.body) as ApiAnswer;
    } catch {
      // A proxy's error page or a cut answer: transient as far as we can tell.
      throw new LlmRequestError(`language model answered ${res.status} with a body that is not JSON: ${errorText(res.body)}`, res.status, true);
    }
    const choice = Array.isArray(parsed.choices) ? parsed.choices[0] : undefined;
    if (!choice) throw new LlmRequestError(`language model answered without choices: ${errorText(res.body)}`, res.status, false);
    const content = choice.message?.content;
    return {
      content: typeof content === "string" ? content : "",
      model: typeof parsed.model === "string" && parsed.model ? parsed.model : req.model,
      finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
      promptTokens: tokens(parsed.usage?.prompt_tokens),
      completionTokens: tokens(parsed.usage?.completion_tokens),
    };
  }
}

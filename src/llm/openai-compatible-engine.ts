import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { ChatCompletionsClient, LlmRequestError, type ChatCompletion, type Sleep } from "./chat-completions.js";
import type { LlmSettings } from "./llm-config.js";
import { costMicroUsd } from "./llm-cost.js";
import type { LlmEngine, LlmMessage, LlmUsage, StructuredAnswer, StructuredRequest } from "./llm-engine.js";
import type { UsageSink } from "./llm-usage-ledger.js";
import { parseAnswer, repairMessages, withSchema } from "./structured-output.js";

// LlmEngine over an OpenAI-compatible chat-completions API. Each completion (first answer and repair)
// is accounted to the request's job: tokens, internal cost, and whether it gave a valid answer.

/** Defaults when the caller does not say: deterministic-leaning sampling and a bounded answer. */
export const DEFAULT_TEMPERATURE = 0;
export const DEFAULT_MAX_TOKENS = 2048;

/** The model answered, but not with a valid object, even after the repair request. */
export class LlmAnswerError extends Error {}

export class OpenAiCompatibleEngine implements LlmEngine {
  private readonly client: ChatCompletionsClient;
  readonly upstream: string;

  constructor(
    private readonly settings: LlmSettings,
    policy: SafeFetchPolicy,
    private readonly usage: UsageSink,
    sleep?: Sleep,
  ) {
    const base = new URL(settings.baseUrl);
    // The endpoint is the operator's own setting, not an agent-supplied URL: it may be a private or
    // loopback address (Ollama, llama.cpp, vLLM beside the service) and plain http. The client sends
    // nothing anywhere else; the circuit breakers still apply.
    const port = base.port || (base.protocol === "https:" ? "443" : "80");
    const own: SafeFetchPolicy = { ...policy, allow: [...policy.allow, `${base.hostname.replace(/^\[|\]$/g, "")}:${port}`], allowHttp: policy.allowHttp || base.protocol === "http:" };
    this.client = new ChatCompletionsClient(settings, own, sleep);
    this.upstream = base.origin;
  }

  modelFor(family: string): string {
    return this.settings.models[family] ?? this.settings.model;
  }

  async complete<T>(req: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
    const model = this.modelFor(req.family);
    const messages = withSchema(req.messages, req.schemaName, req.schema);
    const total: LlmUsage = { promptTokens: 0, completionTokens: 0, costMicroUsd: 0n };

    const ask = async (msgs: LlmMessage[], repair: boolean): Promise<ChatCompletion> => {
      try {
        return await this.client.complete({ model, messages: msgs, temperature: req.temperature ?? DEFAULT_TEMPERATURE, maxTokens: req.maxTokens ?? DEFAULT_MAX_TOKENS });
      } catch (err) {
        const error = err instanceof LlmRequestError ? err.message : String(err);
        await this.usage.record({ accountTo: req.accountTo, family: req.family, model, promptTokens: 0, completionTokens: 0, costMicroUsd: 0n, ok: false, repair, error });
        throw err;
      }
    };
    const account = async (c: ChatCompletion, ok: boolean, repair: boolean, error: string | null) => {
      const cost = costMicroUsd(c.promptTokens, c.completionTokens, this.settings);
      total.promptTokens += c.promptTokens;
      total.completionTokens += c.completionTokens;
      total.costMicroUsd += cost;
      await this.usage.record({ accountTo: req.accountTo, family: req.family, model: c.model, promptTokens: c.promptTokens, completionTokens: c.completionTokens, costMicroUsd: cost, ok, repair, error });
    };

    const first = await ask(messages, false);
    const parsed = parseAnswer(first.content, req.schema);
    await account(first, parsed.ok, false, parsed.ok ? null : parsed.error);
    if (parsed.ok) return { value: parsed.value, model: first.model, usage: total, repaired: false };

    const second = await ask(repairMessages(messages, req.schemaName, first.content, parsed.error), true);
    const repaired = parseAnswer(second.content, req.schema);
    await account(second, repaired.ok, true, repaired.ok ? null : repaired.error);
    if (repaired.ok) return { value: repaired.value, model: second.model, usage: total, repaired: true };
    throw new LlmAnswerError(`the language model gave no valid "${req.schemaName}" after one repair request: ${repaired.error}`);
  }
}

import { expect } from "chai";
import { z } from "zod";
import { OpenAiCompatibleEngine, LlmAnswerError } from "../../../src/llm/openai-compatible-engine.js";
import { LlmRequestError, backoffMs, retryAfterMs } from "../../../src/llm/chat-completions.js";
import { llmSettings, parseModelOverrides, type LlmSettings } from "../../../src/llm/llm-config.js";
import { costMicroUsd } from "../../../src/llm/llm-cost.js";
import type { UsageRow, UsageSink } from "../../../src/llm/llm-usage-ledger.js";
import { answerJsonText } from "../../../src/llm/structured-output.js";
import { loadConfig, ConfigError } from "../../../src/config.js";
import { llmServerForSuite, TEST_LLM_MODEL } from "../../fixtures/llm-server.js";

// The OpenAI-compatible engine against the local chat-completions server: structured answers, the one
// repair request, retries, timeouts, accounting and the concurrency bound.

const Verdict = z.object({ verdict: z.enum(["approve", "reject"]), reasons: z.array(z.string()).min(1) });

class Rows implements UsageSink {
  rows: UsageRow[] = [];
  async record(row: UsageRow): Promise<void> {
    this.rows.push(row);
  }
}

describe("llm: OpenAI-compatible engine", () => {
  const llm = llmServerForSuite();
  let rows: Rows;
  let waits: number[];

  function engine(over: Partial<LlmSettings> = {}): OpenAiCompatibleEngine {
    const settings: LlmSettings = {
      baseUrl: `${llm.base}/v1`,
      apiKey: undefined,
      model: TEST_LLM_MODEL,
      models: { translation: "qwen2.5:14b" },
      timeoutMs: 2_000,
      maxRetries: 2,
      concurrency: 4,
      priceInputMicroUsdPerMTok: 2_500_000n, // $2.50 per million input tokens
      priceOutputMicroUsdPerMTok: 10_000_000n, // $10 per million output tokens
      ...over,
    };
    const policy = { allow: [new URL(llm.base).host], allowHttp: true };
    return new OpenAiCompatibleEngine(settings, policy, rows, async (ms) => void waits.push(ms));
  }

  const ask = (e: OpenAiCompatibleEngine, family = "security") =>
    e.complete({ family, accountTo: "pay_test", schemaName: "verdict", schema: Verdict, messages: [{ role: "system", content: "You review vendors." }, { role: "user", content: "Vendor: ACME" }] });

  beforeEach(() => {
    llm.reset();
    rows = new Rows();
    waits = [];
  });

  it("sends the chat-completions request (model per family, JSON mode, schema in one system message) and returns the validated object", async () => {
    llm.script({ json: { verdict: "approve", reasons: ["clean"] }, usage: { prompt_tokens: 1200, completion_tokens: 300 } });
    const a = await ask(engine({ apiKey: "sk-test-secret" }), "translation");
    expect(a.value).to.deep.equal({ verdict: "approve", reasons: ["clean"] });
    expect(a.model).to.equal("qwen2.5:14b");
    expect(a.repaired).to.equal(false);
    // 1200 × 2.5 + 300 × 10 = 6000 micro-USD
    expect(a.usage).to.deep.equal({ promptTokens: 1200, completionTokens: 300, costMicroUsd: 6000n });
    const seen = llm.requests[0]!;
    expect(seen.body.model).to.equal("qwen2.5:14b");
    expect(seen.body.response_format).to.deep.equal({ type: "json_object" });
    expect(seen.body.temperature).to.equal(0);
    expect(seen.body.max_tokens).to.be.a("number");
    expect(seen.authorization).to.equal("Bearer sk-test-secret");
    expect(seen.schemaName).to.equal("verdict");
    expect(seen.body.messages.map((m) => m.role)).to.deep.equal(["system", "user"]);
    expect(seen.body.messages[0]!.content).to.contain("You review vendors.").and.contain('"enum":["approve","reject"]');
    expect(rows.rows).to.deep.equal([{ accountTo: "pay_test", family: "translation", model: "qwen2.5:14b", promptTokens: 1200, completionTokens: 300, costMicroUsd: 6000n, ok: true, repair: false, error: null }]);
  });

  it("reaches the operator's endpoint on a loopback address over http even when the fetch policy allows neither", async () => {
    llm.script({ json: { verdict: "approve", reasons: ["local"] } });
    const settings: LlmSettings = { baseUrl: `${llm.base}/v1`, apiKey: undefined, model: "llama3.1:8b", models: {}, timeoutMs: 2_000, maxRetries: 0, concurrency: 1, priceInputMicroUsdPerMTok: 0n, priceOutputMicroUsdPerMTok: 0n };
    const local = new OpenAiCompatibleEngine(settings, { allow: [], allowHttp: false }, rows);
    expect((await ask(local)).value.reasons).to.deep.equal(["local"]);
    expect(local.upstream).to.equal(llm.base);
  });

  it("sends no Authorization header when no key is configured (Ollama, llama.cpp)", async () => {
    llm.script({ json: { verdict: "reject", reasons: ["x"] } });
    await ask(engine());
    expect(llm.requests[0]!.authorization).to.equal(undefined);
  });

  it("repairs a malformed answer with one request carrying the error and the bad answer", async () => {
    llm.script({ content: '{"verdict": "approve", reasons: [' }, { content: '```json\n{"verdict":"approve","reasons":["fixed"]}\n```' });
    const a = await ask(engine());
    expect(a.value.reasons).to.deep.equal(["fixed"]);
    expect(a.repaired).to.equal(true);
    expect(llm.requests).to.have.length(2);
    const repair = llm.requests[1]!;
    expect(repair.repair).to.equal(true);
    const msgs = repair.body.messages;
    expect(msgs.at(-2)).to.deep.equal({ role: "assistant", content: '{"verdict": "approve", reasons: [' });
    expect(msgs.at(-1)!.content).to.contain("not valid JSON");
    expect(rows.rows.map((r) => [r.ok, r.repair])).to.deep.equal([[false, false], [true, true]]);
    expect(rows.rows[0]!.error).to.contain("not valid JSON");
  });

  it("repairs a schema-violating answer, naming the failing field", async () => {
    llm.script({ json: { verdict: "maybe", reasons: [] } }, { json: { verdict: "reject", reasons: ["late"] } });
    const a = await ask(engine());
    expect(a.value.verdict).to.equal("reject");
    expect(llm.requests[1]!.lastUser).to.contain("verdict").and.contain("reasons");
  });

  it("throws after the repair answer is invalid too, and accounts both completions as failed", async () => {
    llm.script({ content: "I think you should approve." }, { json: { verdict: "approve" } });
    const err = await ask(engine()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(LlmAnswerError);
    expect((err as Error).message).to.contain("reasons");
    expect(llm.requests).to.have.length(2);
    expect(rows.rows.map((r) => r.ok)).to.deep.equal([false, false]);
    expect(rows.rows.map((r) => r.costMicroUsd)).to.deep.equal([750n, 750n]); // 100 × 2.5 + 50 × 10 each
  });

  it("retries a 429 after the server's Retry-After, then succeeds", async () => {
    llm.script({ status: 429, retryAfter: 3, message: "Rate limit reached" }, { json: { verdict: "approve", reasons: ["ok"] } });
    const a = await ask(engine());
    expect(a.value.verdict).to.equal("approve");
    expect(llm.requests).to.have.length(2);
    expect(waits).to.deep.equal([3000]);
    expect(rows.rows).to.have.length(1);
  });

  it("retries 5xx with exponential backoff and gives up after LLM_MAX_RETRIES, accounting the failure", async () => {
    llm.respond(() => ({ status: 500, message: "upstream overloaded" }));
    const err = await ask(engine({ maxRetries: 2 })).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(LlmRequestError);
    expect((err as Error).message).to.contain("500").and.contain("upstream overloaded").and.contain("3 attempts");
    expect(llm.requests).to.have.length(3);
    expect(waits).to.have.length(2);
    expect(waits[1]!).to.be.greaterThan(waits[0]!);
    expect(rows.rows).to.deep.equal([{ accountTo: "pay_test", family: "security", model: TEST_LLM_MODEL, promptTokens: 0, completionTokens: 0, costMicroUsd: 0n, ok: false, repair: false, error: (err as Error).message }]);
  });

  it("never lets the API key out in an error, even when the provider echoes it", async () => {
    llm.script({ status: 401, message: "Incorrect API key provided: sk-live-0123456789" });
    const err = (await ask(engine({ apiKey: "sk-live-0123456789" })).catch((e: unknown) => e)) as Error;
    expect(err.message).to.contain("Incorrect API key provided: [redacted]").and.not.to.contain("sk-live");
    expect(rows.rows[0]!.error).not.to.contain("sk-live");
  });

  it("does not retry a 4xx other than 429 (bad key, unknown model)", async () => {
    llm.script({ status: 401, message: "Incorrect API key provided", code: "invalid_api_key" });
    const err = await ask(engine()).catch((e: unknown) => e);
    expect((err as Error).message).to.contain("401").and.contain("Incorrect API key");
    expect(llm.requests).to.have.length(1);
  });

  it("times out a request that hangs and retries it", async () => {
    llm.script({ hang: true }, { json: { verdict: "approve", reasons: ["after timeout"] } });
    const a = await ask(engine({ timeoutMs: 300 }));
    expect(a.value.reasons).to.deep.equal(["after timeout"]);
    expect(llm.requests).to.have.length(2);
    expect(waits).to.have.length(1);
  });

  it("fails on a timeout when no retry is left", async () => {
    llm.script({ hang: true });
    const err = await ask(engine({ timeoutMs: 300, maxRetries: 0 })).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(LlmRequestError);
    expect((err as Error).message).to.match(/within 300 ms/);
  });

  it("bounds the requests in flight by LLM_CONCURRENCY across parallel calls", async () => {
    llm.respond(() => ({ json: { verdict: "approve", reasons: ["p"] }, delayMs: 60 }));
    const e = engine({ concurrency: 3 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => ask(e)));
    expect(answers).to.have.length(10);
    expect(llm.requests).to.have.length(10);
    expect(llm.maxInFlight).to.equal(3);
  });
});

describe("llm: settings, cost, backoff and answer text", () => {
  it("reads the LLM_* settings; no LLM_BASE_URL means no model", () => {
    expect(loadConfig({}).llm).to.equal(undefined);
    const c = loadConfig({ LLM_BASE_URL: "http://localhost:11434/v1/", LLM_MODEL: "llama3.1:8b", LLM_MODELS: "translation=qwen2.5:14b, security=gpt-4o", LLM_PRICE_INPUT_PER_MTOK_USD: "0.15", LLM_PRICE_OUTPUT_PER_MTOK_USD: "0.6" }).llm!;
    expect(c.baseUrl).to.equal("http://localhost:11434/v1");
    expect(c.apiKey).to.equal(undefined);
    expect(c.models).to.deep.equal({ translation: "qwen2.5:14b", security: "gpt-4o" });
    expect(c.priceInputMicroUsdPerMTok).to.equal(150_000n);
    expect(c.priceOutputMicroUsdPerMTok).to.equal(600_000n);
    expect([c.timeoutMs, c.maxRetries, c.concurrency]).to.deep.equal([60_000, 2, 4]);
    expect(() => loadConfig({ LLM_BASE_URL: "http://localhost:11434/v1" })).to.throw(ConfigError, /LLM_MODEL/);
    expect(() => loadConfig({ LLM_BASE_URL: "http://x/v1", LLM_MODEL: "m", LLM_MODELS: "translation" })).to.throw(ConfigError, /LLM_MODELS/);
    expect(parseModelOverrides("")).to.deep.equal({});
    expect(llmSettings({ LLM_MODELS: "", LLM_TIMEOUT_MS: 1, LLM_MAX_RETRIES: 0, LLM_CONCURRENCY: 1, LLM_PRICE_INPUT_PER_MTOK_USD: "0", LLM_PRICE_OUTPUT_PER_MTOK_USD: "0" })).to.equal(undefined);
  });

  it("costs in whole micro-USD, rounded up", () => {
    const prices = { priceInputMicroUsdPerMTok: 150_000n, priceOutputMicroUsdPerMTok: 600_000n };
    expect(costMicroUsd(1_000_000, 1_000_000, prices)).to.equal(750_000n);
    expect(costMicroUsd(10, 0, prices)).to.equal(2n); // 1.5 -> 2
    expect(costMicroUsd(0, 0, prices)).to.equal(0n);
  });

  it("reads Retry-After as seconds or a date, and backs off exponentially otherwise", () => {
    expect(retryAfterMs("2")).to.equal(2000);
    expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now())).to.be.within(3000, 5000);
    expect(retryAfterMs("soon")).to.equal(undefined);
    expect(retryAfterMs("9999")).to.equal(60_000);
    expect(backoffMs(0, undefined, () => 0)).to.equal(500);
    expect(backoffMs(3, undefined, () => 0)).to.equal(4000);
    expect(backoffMs(3, 1500)).to.equal(1500);
  });

  it("strips reasoning blocks and Markdown fences around the JSON", () => {
    expect(answerJsonText('<think>hmm</think>\n```json\n{"a":1}\n```')).to.equal('{"a":1}');
    expect(answerJsonText(' {"a":1} ')).to.equal('{"a":1}');
  });
});

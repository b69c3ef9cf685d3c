import { expect } from "chai";
import { createHash } from "node:crypto";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectRefundedAfterRepair, expectUnavailableWithoutLlm, llmJobSuite } from "../../fixtures/llm-jobs.js";
import { pollResult, pollUntil } from "../../fixtures/results.js";
import { expectBadInputRefused, expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { startTestServer } from "../../fixtures/test-server.js";
import { TranslationOutput } from "../../../src/skus/translation-zh-en.js";

const SKU = "translation.zh-en";
const PRICE = 50_000n;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("translation.zh-en: Simplified Chinese <-> English by the configured LLM (async)", function () {
  this.timeout(120_000);
  const { llm, up, order, usageOf } = llmJobSuite(SKU, {
    env: {
      LLM_MODELS: "translation=qwen2.5:14b",
      LLM_PRICE_INPUT_PER_MTOK_USD: "2.5",
      LLM_PRICE_OUTPUT_PER_MTOK_USD: "10",
      LLM_MAX_RETRIES: "1",
      // Failures of the scripted model must not open its circuit breaker for the later tests.
      BREAKER_FAILURE_THRESHOLD: "1000",
    },
  });

  it("is listed as available, with its input and output schemas, when an LLM is configured", async () => {
    const catalog = (await (await fetch(`${up.srv.url}/v1/services`)).json()) as Json;
    const s = (catalog.services as Json[]).find((x) => x.sku_id === SKU)!;
    expect(s.available).to.equal(true);
    expect(s["x-input-schema"].properties).to.have.property("text");
    expect(s["x-output-schema"].required).to.include.members(["translation", "source_language", "target_language", "ai_generation"]);
  });

  it("translates Chinese to English (direction detected), charges the list price and accounts the tokens to the job", async () => {
    const before = await up.balance();
    const text = "x402 支付在 Base 网络上只结算一次，结算通常在两秒内完成。";
    llm.script({ json: { translation: "x402 payments settle exactly once on the Base network; settlement usually completes within two seconds.", notes: [] }, usage: { prompt_tokens: 412, completion_tokens: 37 } });
    const jobId = await order({ text });
    const done = await pollResult(up.srv, jobId);
    expect(done.status).to.equal("delivered");
    const d = done.deliverable;
    expect(() => TranslationOutput.parse(d)).not.to.throw();
    expect(d).to.include({ source_language: "zh-Hans", target_language: "en", direction: "zh-en" });
    expect(d.translation).to.equal("x402 payments settle exactly once on the Base network; settlement usually completes within two seconds.");
    expect(d.detection).to.include({ method: "detected", detected_direction: "zh-en", latin_words: 2, threshold: 0.5 });
    expect(d.detection.han_characters).to.equal(21);
    expect(d.source_text).to.deep.equal({ characters: [...text].length, sha256: sha256(text) });
    expect(d.translation_sha256).to.equal(sha256(d.translation));
    expect(d.ai_generation).to.deep.include({ ai_generated: true, engine: "llm", model: "qwen2.5:14b", repaired: false });
    expect(d.data_subject_screen.result).to.equal("passed");
    expect(done.powered_by).to.equal("svc-translation/llm (qwen2.5:14b)");
    // No internal cost or token count reaches the buyer.
    expect(JSON.stringify(done)).not.to.match(/token|micro|cost/i);

    // The model got the text as data, the direction, and the schema.
    const seen = llm.requests[0]!;
    expect(seen.body.model).to.equal("qwen2.5:14b");
    expect(seen.schemaName).to.equal("translation");
    expect(seen.body.messages[0]!.content).to.contain("from Simplified Chinese (zh-Hans) to English");
    expect(seen.lastUser).to.equal(`<source lang="zh-Hans">\n${text}\n</source>`);

    // 412 × 2.5 + 37 × 10 = 1400 micro-USD, accounted to the job's payment.
    const rows = await usageOf(jobId);
    expect(rows.map((r) => ({ family: r.family, model: r.model, p: r.promptTokens, c: r.completionTokens, cost: r.costMicroUsd, ok: r.ok, repair: r.repair }))).to.deep.equal([
      { family: "translation", model: "qwen2.5:14b", p: 412, c: 37, cost: 1400n, ok: true, repair: false },
    ]);
    expect(await up.balance()).to.equal(before - PRICE);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("translates English to Simplified Chinese (direction detected)", async () => {
    const before = await up.balance();
    llm.script({ json: { translation: "每笔付款在链上只结算一次。", notes: ["“settle” rendered as 结算"] } });
    const done = await pollResult(up.srv, await order({ task: "Each payment settles on-chain exactly once." }));
    expect(done.status).to.equal("delivered");
    expect(done.deliverable).to.include({ source_language: "en", target_language: "zh-Hans", direction: "en-zh", translation: "每笔付款在链上只结算一次。" });
    expect(done.deliverable.notes).to.deep.equal(["“settle” rendered as 结算"]);
    expect(done.deliverable.detection).to.include({ han_characters: 0, latin_words: 7, han_share: 0 });
    expect(llm.requests[0]!.body.messages[0]!.content).to.contain("from English to Simplified Chinese (zh-Hans)");
    expect(await up.balance()).to.equal(before - PRICE);
  });

  it("rejects an answer in the wrong language and repairs it", async () => {
    llm.script({ json: { translation: "结算是最终的。" } }, { json: { translation: "Settlement is final and irreversible." } });
    const done = await pollResult(up.srv, await order({ text: "结算是最终的，不可撤销。" }));
    expect(done.status).to.equal("delivered");
    expect(done.deliverable.translation).to.equal("Settlement is final and irreversible.");
    expect(done.deliverable.ai_generation.repaired).to.equal(true);
    expect(llm.requests[1]!.lastUser).to.contain("translation: must be English");
  });

  it("delivers the repaired answer and says so", async () => {
    llm.script({ content: "Sure! Here is the translation: Settlement is final." }, { json: { translation: "Settlement is final and irreversible." } });
    const jobId = await order({ text: "结算是最终的，不可撤销。" });
    const done = await pollResult(up.srv, jobId);
    expect(done.status).to.equal("delivered");
    expect(done.deliverable.translation).to.equal("Settlement is final and irreversible.");
    expect(done.deliverable.ai_generation.repaired).to.equal(true);
    expect(llm.requests.map((r) => r.repair)).to.deep.equal([false, true]);
    expect(llm.requests[1]!.lastUser).to.contain("not valid JSON");
    const rows = await usageOf(jobId);
    expect(rows.map((r) => [r.ok, r.repair, r.costMicroUsd])).to.deep.equal([[false, false, 750n], [true, true, 750n]]);
  });

  it("refunds a job whose answers stay invalid after the repair request, on every attempt", async () => {
    const before = await up.balance();
    llm.respond(() => ({ json: { translation: "还是中文。" } }));
    const jobId = await order({ text: "付款已退还。" });
    await expectRefundedAfterRepair(up, jobId, "must be English", before);
    expect(llm.requests.map((r) => r.repair)).to.deep.equal([false, true, false, true, false, true]);
    expect((await usageOf(jobId)).every((r) => !r.ok)).to.equal(true);
  });

  it("refunds a job when the model keeps failing (429, then 500s) after its retry budget", async () => {
    const before = await up.balance();
    llm.script({ status: 429, retryAfter: 0, message: "Rate limit reached" });
    llm.respond(() => ({ status: 500, message: "model overloaded" }));
    const failed = await pollUntil(up.srv, await order({ text: "付款已退还。" }), ["refunded"]);
    expect(failed.error).to.contain("500").and.to.contain("model overloaded");
    expect(llm.requests).to.have.length(6); // 3 job attempts × (1 + LLM_MAX_RETRIES=1)
    expect(await up.balance()).to.equal(before);
  });

  it("refuses mainland-CN data subjects with 409 data_subject_excluded before any challenge, charging nothing and never calling the model", async () => {
    const answers = await expectFailuresUncharged(up, SKU, [
      [{ text: "Please translate this contract clause.", data_subject_jurisdiction: "cn" }, 409, "data_subject_excluded"],
      [{ text: "张伟的身份证号是11010519491231002X。" }, 409, "data_subject_excluded"],
      [{ text: "Call Li Na at +86 138 1234 5678 tomorrow." }, 409, "data_subject_excluded"],
      [{ text: "联系电话：13912345678" }, 409, "data_subject_excluded"],
      [{ text: "请把货物寄到北京市朝阳区建国路88号。" }, 409, "data_subject_excluded"],
      [{ text: "Ship it to 88 Jianguo Road, Chaoyang District, Beijing 100022." }, 409, "data_subject_excluded"],
    ]);
    for (const a of answers) {
      expect(a.challenged).to.equal(false);
      expect(a.body.error.message).to.contain("mainland-CN subjects").and.contain("nothing was charged");
      expect(a.body.error.message).not.to.contain("11010519491231002X").and.not.to.contain("1234 5678");
    }
    expect(llm.requests).to.deep.equal([]);
  });

  it("serves subjects outside the mainland and texts that only mention mainland places", async () => {
    const cases = [
      { text: "香港的地址不在此规则内。", data_subject_jurisdiction: "HK" },
      { text: "北京是中国的首都，上海的马路很宽。" },
      { text: "The order number is 110105194912310021 and the invoice total is 13,912,345." },
    ];
    for (const body of cases) {
      llm.script({ json: { translation: body.text.startsWith("The") ? "订单号是110105194912310021。" : "Not an address." } });
      const done = await pollResult(up.srv, await order(body));
      expect(done.status, JSON.stringify(body)).to.equal("delivered");
    }
  });

  it("refuses bad input before any challenge and charges nothing", async () => {
    await expectBadInputRefused(up, SKU, [
      [{}, "text"],
      [{ text: "" }, "text"],
      [{ text: "12345 !!!" }, "text"],
      [{ text: "x".repeat(6_001) }, "text"],
      [{ text: "hello", direction: "fr-en" }, "direction"],
      [{ text: "hello world", direction: "zh-en" }, "text"],
      [{ text: "你好", direction: "en-zh" }, "text"],
      [{ task: "你好", data_subject_jurisdiction: "China" }, "data_subject_jurisdiction"],
    ]);
    expect(llm.requests).to.deep.equal([]);
  });
});

describe("translation.zh-en without a configured LLM", function () {
  this.timeout(60_000);

  it("is listed as unavailable and refused with 409 service_unavailable before any challenge", async () => {
    const srv = await startTestServer({});
    try {
      await expectUnavailableWithoutLlm(srv, SKU, { text: "你好" });
    } finally {
      await srv.close();
    }
  });
});

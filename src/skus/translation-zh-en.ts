import { createHash } from "node:crypto";
import { z } from "zod";
import { AiGenerationOut, aiGeneration } from "../llm/ai-disclosure.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import { mainlandSubject, SCREEN_RULES } from "../translation/mainland-subject.js";
import { detectDirection, HAN_SHARE_THRESHOLD, scriptCount, type Direction } from "../translation/script-share.js";
import { LANGUAGE_TAG, translationAnswer, translationMessages } from "../translation/translation-prompt.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// translation.zh-en (async): Simplified Chinese <-> English by the configured language model (family
// `translation`). The direction is detected from the share of Han characters (script-share.ts) unless
// the buyer names it. Texts about mainland-CN data subjects are refused before any charge
// (translation/mainland-subject.ts: 409 `data_subject_excluded`). Registered only when an LLM is configured.

export const MAX_TEXT_CHARS = 6_000;
const FAMILY = "translation";

const Input = z
  .object({
    text: z.string().trim().min(1).max(MAX_TEXT_CHARS).optional(),
    /** The generic field of every SKU: the text to translate when `text` is absent. */
    task: z.string().trim().min(1).max(MAX_TEXT_CHARS).optional(),
    direction: z.enum(["auto", "zh-en", "en-zh"]).default("auto"),
    /** ISO 3166-1 alpha-2 country of the people the text is about, when the buyer knows it (CN is refused). */
    data_subject_jurisdiction: z.string().trim().regex(/^[A-Za-z]{2}$/, "an ISO 3166-1 alpha-2 country code").optional(),
  })
  .loose()
  .superRefine((v, ctx) => {
    const text = v.text ?? v.task;
    if (text === undefined) return void ctx.addIssue({ code: "custom", path: ["text"], message: "a text to translate is required (text, or task)" });
    const count = scriptCount(text);
    const path = [v.text !== undefined ? "text" : "task"];
    if (!detectDirection(count)) ctx.addIssue({ code: "custom", path, message: "the text has no Chinese character and no English word to translate" });
    if (v.direction === "zh-en" && count.han_characters === 0) ctx.addIssue({ code: "custom", path, message: "direction zh-en, but the text has no Chinese character" });
    if (v.direction === "en-zh" && count.latin_words === 0) ctx.addIssue({ code: "custom", path, message: "direction en-zh, but the text has no English word" });
  });
type Input = z.infer<typeof Input>;

const Language = z.enum(["zh-Hans", "en"]);

export const TranslationOutput = z.object({
  source_language: Language,
  target_language: Language,
  direction: z.enum(["zh-en", "en-zh"]),
  translation: z.string(),
  notes: z.array(z.string()).describe("the model's remarks on ambiguities or untranslatable terms"),
  detection: z.object({
    method: z.enum(["detected", "requested"]),
    rule: z.string(),
    han_characters: z.number().int(),
    latin_words: z.number().int(),
    han_share: z.number(),
    threshold: z.number(),
    detected_direction: z.enum(["zh-en", "en-zh"]),
  }),
  source_text: z.object({ characters: z.number().int(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  translation_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  ai_generation: AiGenerationOut,
  data_subject_screen: z.object({ result: z.literal("passed"), checks: z.array(z.string()), declared_jurisdiction: z.string().nullable() }),
  translated_at: Iso,
});

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");
const textOf = (v: Input) => (v.text ?? v.task)!;

export function translationZhEn(llm: LlmEngine): SkuHandler<Input> {
  return {
    skuId: "translation.zh-en",
    poweredBy: `svc-translation/llm (${llm.modelFor(FAMILY)})`,
    input: Input,
    output: TranslationOutput,
    upstreams: () => (llm.upstream ? [llm.upstream] : []),
    // Before any challenge: a refusal here is a 409 and nothing is charged.
    async precheck(v) {
      const hit = mainlandSubject(textOf(v), v.data_subject_jurisdiction);
      if (hit) throw new SkuRefusal("data_subject_excluded", `translation.zh-en does not process data of mainland-CN subjects: the call contains ${SCREEN_RULES[hit.rule]} (${hit.masked})`);
      return undefined;
    },
    async run(v, ctx) {
      const text = textOf(v);
      const count = scriptCount(text);
      const detected = detectDirection(count)!;
      const direction: Direction = v.direction === "auto" ? detected : v.direction;
      const answer = await llm.complete({
        family: FAMILY,
        accountTo: ctx.paymentId,
        schemaName: "translation",
        schema: translationAnswer(direction),
        messages: translationMessages(direction, text),
        // Chinese runs about one token per character, English about 1.3 per word: room for either way.
        maxTokens: Math.min(16_384, 2 * text.length + 512),
      });
      const [from, to] = direction === "zh-en" ? (["zh", "en"] as const) : (["en", "zh"] as const);
      const translation = answer.value.translation.trim();
      return {
        source_language: LANGUAGE_TAG[from],
        target_language: LANGUAGE_TAG[to],
        direction,
        translation,
        notes: answer.value.notes,
        detection: {
          method: v.direction === "auto" ? "detected" : "requested",
          rule: `Chinese (translated to English) when Han characters are at least ${HAN_SHARE_THRESHOLD * 100}% of Han characters plus Latin words; English (translated to Chinese) otherwise`,
          ...count,
          threshold: HAN_SHARE_THRESHOLD,
          detected_direction: detected,
        },
        source_text: { characters: [...text].length, sha256: sha256(text) },
        translation_sha256: sha256(translation),
        ai_generation: aiGeneration("Machine translation written by a language model; not reviewed by a human translator.", answer),
        data_subject_screen: { result: "passed", checks: Object.values(SCREEN_RULES), declared_jurisdiction: v.data_subject_jurisdiction?.toUpperCase() ?? null },
        translated_at: ctx.now.toISOString(),
      };
    },
  };
}

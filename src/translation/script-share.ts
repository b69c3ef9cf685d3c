// Which language a text is in, for Simplified Chinese and English only: the share of CJK Han
// characters among Han characters plus Latin words (one Han character counts like one word).

/** CJK Unified Ideographs, Extension A and the compatibility block. */
const HAN = /[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]/gu;
const LATIN_WORD = /[A-Za-z]+(?:['’][A-Za-z]+)*/g;

/** A text at or above this Han share is Chinese (translated to English); below it, English (translated to Chinese). */
export const HAN_SHARE_THRESHOLD = 0.5;

export interface ScriptCount {
  han_characters: number;
  latin_words: number;
  /** han / (han + latin words), 0 when the text has neither. */
  han_share: number;
}

export function scriptCount(text: string): ScriptCount {
  const han = text.match(HAN)?.length ?? 0;
  const latin = text.match(LATIN_WORD)?.length ?? 0;
  const total = han + latin;
  return { han_characters: han, latin_words: latin, han_share: total ? Math.round((han / total) * 10_000) / 10_000 : 0 };
}

export type Direction = "zh-en" | "en-zh";

/** The detected direction, or undefined when the text has no Han character and no Latin word. */
export function detectDirection(count: ScriptCount): Direction | undefined {
  if (count.han_characters + count.latin_words === 0) return undefined;
  return count.han_share >= HAN_SHARE_THRESHOLD ? "zh-en" : "en-zh";
}

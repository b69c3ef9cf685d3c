import winkSentiment from "wink-sentiment";
import { z } from "zod";

// The lexicon sentiment engine: wink-sentiment (AFINN-165 words and two-word phrases, emojis,
// emoticons, hashtags, negation within two words before). Per text it reports wink's absolute score,
// a normalized score in [-1, 1] (wink's normalized score, which lies in [-5, 5], divided by 5) and a
// label from fixed thresholds on the normalized score (the VADER convention):
//   positive  normalized >= +0.05
//   negative  normalized <= -0.05
//   neutral   otherwise (also a text with no scored word)
// and the words that carried the score. Several texts aggregate as the mean of their normalized
// scores, labelled with the same thresholds.

export const ENGINE_NAME = "lexicon:wink-sentiment (AFINN-165)";
export const POSITIVE_THRESHOLD = 0.05;
export const NEGATIVE_THRESHOLD = -0.05;
export const LABELS = ["positive", "neutral", "negative"] as const;
export type SentimentLabel = (typeof LABELS)[number];

export const SentimentWord = z.object({
  /** The word or two-word phrase as written in the text. */
  word: z.string(),
  /** Its lexicon score after negation, from -5 to +5. */
  score: z.number(),
  negated: z.boolean(),
});
export type SentimentWord = z.infer<typeof SentimentWord>;

export const TextSentiment = z.object({
  /** Sum of the word scores (wink's absolute score). */
  score: z.number(),
  /** In [-1, 1]: wink's length-adjusted normalized score divided by 5. */
  normalized_score: z.number(),
  label: z.enum(LABELS),
  words: z.array(SentimentWord).describe("lexicon engine: the scored words; empty for the llm engine"),
  evidence: z.array(z.string()).optional().describe("llm engine: phrases of the text the model based its score on, each checked to occur in the text"),
});
export type TextSentiment = z.infer<typeof TextSentiment>;

export const AggregateSentiment = z.object({
  /** Mean normalized score of the texts, in [-1, 1]; null when there are none. */
  normalized_score: z.number().nullable(),
  label: z.enum(LABELS).nullable(),
  count: z.number().int(),
  counts: z.object({ positive: z.number().int(), neutral: z.number().int(), negative: z.number().int() }),
});
export type AggregateSentiment = z.infer<typeof AggregateSentiment>;

const round4 = (n: number) => Math.round(n * 10_000) / 10_000 || 0;

export function labelOf(normalized: number): SentimentLabel {
  if (normalized >= POSITIVE_THRESHOLD) return "positive";
  if (normalized <= NEGATIVE_THRESHOLD) return "negative";
  return "neutral";
}

/** The sentiment of one text. */
export function analyzeText(text: string): TextSentiment {
  const r = winkSentiment(text);
  const tokens = r.tokenizedPhrase ?? [];
  const words: SentimentWord[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.score === undefined || t.score === 0) continue;
    // A two-word AFINN phrase is scored on its first token; name the phrase, not half of it.
    const word = t.grouped && tokens[i + 1] ? `${t.value} ${tokens[i + 1]!.value}` : t.value;
    words.push({ word, score: t.score, negated: t.negation === true });
  }
  const normalized = round4(Math.max(-1, Math.min(1, r.normalizedScore / 5)));
  return { score: r.score, normalized_score: normalized, label: labelOf(normalized), words };
}

/** The mean of several normalized scores, with the label counts. */
export function aggregate(scores: readonly TextSentiment[]): AggregateSentiment {
  const counts = { positive: 0, neutral: 0, negative: 0 };
  for (const s of scores) counts[s.label] += 1;
  if (scores.length === 0) return { normalized_score: null, label: null, count: 0, counts };
  const mean = round4(scores.reduce((sum, s) => sum + s.normalized_score, 0) / scores.length);
  return { normalized_score: mean, label: labelOf(mean), count: scores.length, counts };
}

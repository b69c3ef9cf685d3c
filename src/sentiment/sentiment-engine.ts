import type { AiGeneration } from "../llm/ai-disclosure.js";
import { ENGINE_NAME, analyzeText, type TextSentiment } from "./lexicon-sentiment.js";

// Who scores texts for the sentiment SKUs: the lexicon engine (default), or the language model when
// one is configured (llm-sentiment.ts). Both give every text a normalized score in [-1, 1] and a label
// under the same thresholds, so aggregates mean the same whichever engine ran.

export interface SentimentRun {
  scores: TextSentiment[];
  /** The AI-generation disclosure when a language model scored the texts. */
  ai: AiGeneration | null;
}

export interface SentimentEngine {
  /** The deliverable's `engine`. */
  readonly name: string;
  /** The SKU's `powered_by`. */
  readonly poweredBy: string;
  /** The origin the engine reaches (the LLM's), for the SKU's circuit-breaker check before any charge. */
  readonly upstream?: string;
  /** Scores texts in order; `about` names their subject (a topic) when there is one. */
  score(texts: readonly string[], o: { accountTo: string; about?: string }): Promise<SentimentRun>;
}

export const LEXICON_ENGINE: SentimentEngine = {
  name: ENGINE_NAME,
  poweredBy: "svc-sentiment/lexicon",
  score: async (texts) => ({ scores: texts.map(analyzeText), ai: null }),
};

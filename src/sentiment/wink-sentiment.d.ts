// wink-sentiment ships no types; this is the part of its documented API the lexicon engine uses.
declare module "wink-sentiment" {
  interface WinkToken {
    value: string;
    tag: string;
    /** AFINN (or emoji/emoticon) score of the token, after negation; absent when it carries none. */
    score?: number;
    /** Set when a negation word within two tokens before flipped the score. */
    negation?: boolean;
    /** Set on the first token of a two-word AFINN phrase; the next token is part of it. */
    grouped?: number;
  }
  interface WinkResult {
    score: number;
    /** Between -5 and +5. */
    normalizedScore: number;
    tokenizedPhrase?: WinkToken[];
  }
  function sentiment(phrase: string): WinkResult;
  export default sentiment;
}

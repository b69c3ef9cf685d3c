import { numbersOf, squash, terms } from "./terms.js";

// Whether a passage supports a claim, checked the same way whatever wrote the claim (the extractive
// engine quotes sentences; an LLM engine would paraphrase): the claim is quoted verbatim in the
// passage, or at least SUPPORT_COVERAGE of the claim's distinct terms occur in the passage and every
// number the claim states occurs there too (so "330 m" is not supported by "300 m").

export const SUPPORT_COVERAGE = 0.6;

export type SupportCheck = {
  supported: boolean;
  /** The claim's text occurs verbatim (whitespace and case aside) in the passage. */
  verbatim: boolean;
  /** Share of the claim's distinct terms found in the passage, 0..1 (two decimals). */
  coverage: number;
  /** Numbers in the claim missing from the passage. */
  missing_numbers: string[];
}

/** Terms and numbers of passages, computed once per passage text when many claims are checked. */
export type PassageMemo = Map<string, { terms: Set<string>; numbers: Set<string>; squashed: string }>;

function passageFacts(passage: string, memo?: PassageMemo) {
  const hit = memo?.get(passage);
  if (hit) return hit;
  const facts = { terms: new Set(terms(passage)), numbers: new Set(numbersOf(passage)), squashed: squash(passage).toLowerCase() };
  memo?.set(passage, facts);
  return facts;
}

export function checkSupport(claim: string, passage: string, memo?: PassageMemo): SupportCheck {
  const p = passageFacts(passage, memo);
  const verbatim = p.squashed.includes(squash(claim).toLowerCase());
  const claimTerms = new Set(terms(claim));
  const found = [...claimTerms].filter((t) => p.terms.has(t)).length;
  const coverage = claimTerms.size ? Math.round((found / claimTerms.size) * 100) / 100 : 0;
  const missing = [...new Set(numbersOf(claim))].filter((n) => !p.numbers.has(n));
  return { supported: verbatim || (claimTerms.size > 0 && coverage >= SUPPORT_COVERAGE && missing.length === 0), verbatim, coverage: verbatim ? 1 : coverage, missing_numbers: verbatim ? [] : missing };
}

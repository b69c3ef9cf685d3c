import { Bm25Index } from "./bm25.js";
import { sentencesOf, type Passage, type SourceText } from "./passages.js";
import { checkSupport, type PassageMemo, type SupportCheck } from "./support.js";
import { squash, terms } from "./terms.js";

// The extractive research brief. The task is split into questions (its sentences and ';'-separated
// parts). Every sentence of every usable source is ranked against each question with BM25; the best
// sentences that share enough of the question's terms (two distinct terms, one for a question of
// fewer than three) become that question's claims, near-duplicates skipped, up to an even share of
// `maxClaims`. A claim is quoted from its passage, which it cites; the support check (support.ts) is
// run anyway, and passages of other sources that also support it are cited as corroboration. A
// question no sentence addresses becomes an unverified gap claim, and statements the buyer asks to
// check (`claims`) are matched against the best passages and marked supported (cited) or unverified.

export const MIN_CLAIM_TERMS = 4;
export const MAX_CLAIM_CHARS = 600;
export const DUPLICATE_JACCARD = 0.6;
export const MAX_CORROBORATIONS = 2;
/** How many best-matching passages of other sources are checked for corroboration. */
export const CORROBORATION_CANDIDATES = 20;

export type BriefSource = {
  /** 1-based number of the source in the call's `urls` order. */
  source: number;
  url: string;
  title: string | null;
  content: SourceText;
}

export type Question = {
  index: number;
  text: string;
  terms: string[];
  covered: boolean;
}

/** `written`: a claim a language model wrote from numbered passages (llm-brief.ts), then checked like any other. */
export type ClaimKind = "extracted" | "written" | "checked" | "gap";

export type Claim = {
  id: number;
  kind: ClaimKind;
  /** Index of the question the claim answers (null for a checked claim). */
  question: number | null;
  text: string;
  status: "supported" | "unverified";
  /** Citation numbers ([n]); empty when unverified. */
  citations: number[];
  /** BM25 score of an extracted claim against its question. */
  score: number | null;
  /** The support check against the first cited (or, when unverified, the closest) passage. */
  support: SupportCheck | null;
}

export type Citation = {
  n: number;
  source: number;
  url: string;
  title: string | null;
  passage_index: number;
  section: string | null;
  char_start: number;
  char_end: number;
  text: string;
}

export type Brief = {
  questions: Question[];
  claims: Claim[];
  citations: Citation[];
  query_terms: string[];
  /** Query terms that occur in no passage of any usable source. */
  uncovered_terms: string[];
}

/** A passage with its source. */
export type PassageRef = { src: BriefSource; passage: Passage };

/** Every passage of the usable sources, in source then passage order. */
export function passageRefs(sources: readonly BriefSource[]): PassageRef[] {
  return sources.flatMap((src) => src.content.passages.map((passage) => ({ src, passage })));
}

/** The brief's citations: one number per cited passage, in order of first citation. */
export class CitationBook {
  readonly citations: Citation[] = [];

  cite(src: BriefSource, passage: Passage): number {
    const hit = this.citations.find((c) => c.source === src.source && c.passage_index === passage.index);
    if (hit) return hit.n;
    const n = this.citations.length + 1;
    this.citations.push({ n, source: src.source, url: src.url, title: src.title, passage_index: passage.index, section: passage.section, char_start: passage.start, char_end: passage.end, text: passage.text });
    return n;
  }
}

/**
 * The buyer's statements, each matched against the passages that best share its terms: supported
 * (citing up to 1 + MAX_CORROBORATIONS supporting passages) or unverified. Ids start at `firstId`.
 */
export function checkStatements(statements: readonly string[], refs: readonly PassageRef[], passageIndex: Bm25Index, memo: PassageMemo, book: CitationBook, firstId: number): Claim[] {
  return statements.map((statement, i) => {
    const text = squash(statement);
    const checks = passageIndex
      .rank(terms(text))
      .slice(0, 8)
      .map((h) => ({ p: refs[h.index]!, check: checkSupport(text, refs[h.index]!.passage.text, memo) }))
      .sort((a, b) => Number(b.check.supported) - Number(a.check.supported) || b.check.coverage - a.check.coverage);
    const best = checks[0];
    const supporting = checks.filter((x) => x.check.supported).slice(0, 1 + MAX_CORROBORATIONS);
    return {
      id: firstId + i,
      kind: "checked" as const,
      question: null,
      text,
      status: supporting.length ? ("supported" as const) : ("unverified" as const),
      citations: supporting.map((x) => book.cite(x.p.src, x.p.passage)),
      score: null,
      support: best?.check ?? null,
    };
  });
}

interface Candidate {
  src: BriefSource;
  passage: Passage;
  text: string;
  terms: string[];
}

/** The task's questions: its sentences, each split further at ';' and line breaks. */
export function questionsOf(task: string): Question[] {
  const parts = sentencesOf(task)
    .flatMap((s) => s.text.split(/[;\n]+/))
    .map(squash)
    .filter(Boolean);
  const qs = parts.map((text) => ({ text, terms: [...new Set(terms(text))] })).filter((q) => q.terms.length);
  if (!qs.length) {
    const all = [...new Set(terms(task))];
    if (all.length) qs.push({ text: squash(task), terms: all });
  }
  return qs.map((q, index) => ({ index, ...q, covered: false }));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let common = 0;
  for (const t of a) if (b.has(t)) common++;
  return common / (a.size + b.size - common || 1);
}

export function composeBrief(task: string, sources: readonly BriefSource[], o: { maxClaims: number; checkClaims?: readonly string[] }): Brief {
  const questions = questionsOf(task);
  const candidates: Candidate[] = [];
  for (const src of sources) {
    for (const passage of src.content.passages) {
      for (const s of passage.sentences) candidates.push({ src, passage, text: s.text, terms: terms(s.text) });
    }
  }
  const sentenceIndex = new Bm25Index(candidates.map((c) => c.terms));
  const passages = passageRefs(sources);
  const passageIndex = new Bm25Index(passages.map((p) => terms(p.passage.text)));
  const memo: PassageMemo = new Map();
  const book = new CitationBook();
  const citationOf = (src: BriefSource, passage: Passage) => book.cite(src, passage);

  const claims: Claim[] = [];
  const chosen: Set<string>[] = [];
  const quota = Math.max(1, Math.ceil(o.maxClaims / Math.max(1, questions.length)));
  for (const q of questions) {
    const minMatch = q.terms.length >= 3 ? 2 : 1;
    let taken = 0;
    for (const hit of sentenceIndex.rank(q.terms)) {
      if (taken >= quota || claims.filter((c) => c.kind === "extracted").length >= o.maxClaims) break;
      const c = candidates[hit.index]!;
      if (hit.matched.length < minMatch || c.terms.length < MIN_CLAIM_TERMS || c.text.length > MAX_CLAIM_CHARS) continue;
      const set = new Set(c.terms);
      if (chosen.some((s) => jaccard(s, set) >= DUPLICATE_JACCARD)) continue;
      chosen.push(set);
      taken++;
      const support = checkSupport(c.text, c.passage.text, memo);
      const cited = support.supported ? [citationOf(c.src, c.passage)] : [];
      if (support.supported) {
        // Corroboration: the passages of other sources that best match the claim, if they support it.
        const others = passageIndex
          .rank(c.terms)
          .map((h) => passages[h.index]!)
          .filter((p) => p.src.source !== c.src.source)
          .slice(0, CORROBORATION_CANDIDATES)
          .map((p) => ({ p, check: checkSupport(c.text, p.passage.text, memo) }))
          .filter((x) => x.check.supported)
          .sort((a, b) => b.check.coverage - a.check.coverage);
        const seen = new Set<number>();
        for (const x of others) {
          if (seen.size >= MAX_CORROBORATIONS || seen.has(x.p.src.source)) continue;
          seen.add(x.p.src.source);
          cited.push(citationOf(x.p.src, x.p.passage));
        }
      }
      claims.push({ id: claims.length + 1, kind: "extracted", question: q.index, text: c.text, status: support.supported ? "supported" : "unverified", citations: cited, score: Math.round(hit.score * 1000) / 1000, support });
    }
    q.covered = taken > 0;
    if (!taken) claims.push({ id: claims.length + 1, kind: "gap", question: q.index, text: `No fetched source addresses: "${q.text}"`, status: "unverified", citations: [], score: null, support: null });
  }

  claims.push(...checkStatements(o.checkClaims ?? [], passages, passageIndex, memo, book, claims.length + 1));

  const queryTerms = [...new Set(questions.flatMap((q) => q.terms))];
  const present = new Set(candidates.flatMap((c) => c.terms));
  return { questions, claims, citations: book.citations, query_terms: queryTerms, uncovered_terms: queryTerms.filter((t) => !present.has(t)) };
}

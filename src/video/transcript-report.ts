import { Bm25Index } from "../research/bm25.js";
import { terms } from "../research/terms.js";
import type { CaptionSegment } from "./captions.js";
import { timestampOf } from "./video-id.js";

// The research report on a transcript. Consecutive caption cues are grouped into passages of about
// WINDOW_SECONDS; key passages are the passages ranked by BM25 against the task (at least two shared
// terms, one for a task of fewer than three terms), best MAX first, reported in time order; the
// summary is extractive (Luhn-style): the passages densest in the transcript's most frequent terms.

export const WINDOW_SECONDS = 30;
export const SUMMARY_TOP_TERMS = 20;

export type TranscriptPassage = {
  start: number;
  end: number;
  timestamp: string;
  text: string;
}

export type KeyPassage = TranscriptPassage & {
  score: number;
  matched_terms: string[];
};

export function passagesOfTranscript(segments: readonly CaptionSegment[]): TranscriptPassage[] {
  const out: TranscriptPassage[] = [];
  let run: CaptionSegment[] = [];
  const flush = () => {
    if (!run.length) return;
    const start = run[0]!.start;
    const last = run.at(-1)!;
    out.push({ start, end: Math.max(last.start + last.duration, last.start), timestamp: timestampOf(start), text: run.map((s) => s.text).join(" ") });
    run = [];
  };
  for (const s of segments) {
    if (run.length && s.start - run[0]!.start >= WINDOW_SECONDS) flush();
    run.push(s);
  }
  flush();
  return out;
}

export function keyPassages(passages: readonly TranscriptPassage[], topic: string, max: number): { query_terms: string[]; passages: KeyPassage[] } {
  const query = [...new Set(terms(topic))];
  if (!query.length) return { query_terms: [], passages: [] };
  const index = new Bm25Index(passages.map((p) => terms(p.text)));
  const minMatch = query.length >= 3 ? 2 : 1;
  const hits = index
    .rank(query)
    .filter((h) => h.matched.length >= minMatch)
    .slice(0, max);
  return {
    query_terms: query,
    passages: hits.map((h) => ({ ...passages[h.index]!, score: Math.round(h.score * 1000) / 1000, matched_terms: h.matched })).sort((a, b) => a.start - b.start),
  };
}

/** The transcript's most frequent terms and the passages that carry most of them, in time order. */
export function extractiveSummary(passages: readonly TranscriptPassage[]): { top_terms: string[]; passages: TranscriptPassage[] } {
  const freq = new Map<string, number>();
  const termLists = passages.map((p) => terms(p.text));
  for (const list of termLists) for (const t of list) freq.set(t, (freq.get(t) ?? 0) + 1);
  const top = [...freq.entries()]
    .filter(([t, n]) => n >= 2 && !/^\d/.test(t))
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, SUMMARY_TOP_TERMS);
  const weight = new Map(top.map(([t, n]) => [t, Math.log(1 + n)]));
  const count = Math.min(5, Math.max(1, Math.round(passages.length / 6)));
  const scored = termLists.map((list, i) => ({ i, score: list.reduce((s, t) => s + (weight.get(t) ?? 0), 0) / Math.sqrt(list.length || 1) }));
  const chosen = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, count)
    .sort((a, b) => a.i - b.i)
    .map((s) => passages[s.i]!);
  return { top_terms: top.map(([t]) => t), passages: chosen.length ? chosen : passages.slice(0, 1) };
}

// Okapi BM25 over a small in-memory collection (the sentences or passages of one call): the ranking
// behind the research brief's claims and a video's key passages.

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface Bm25Hit {
  index: number;
  score: number;
  /** Distinct query terms the document contains. */
  matched: string[];
}

export class Bm25Index {
  private readonly tf: Map<string, number>[];
  private readonly lengths: number[];
  private readonly df = new Map<string, number>();
  private readonly avgLength: number;

  /** `docs` are term lists (see terms()). */
  constructor(docs: readonly string[][]) {
    this.tf = docs.map((d) => {
      const m = new Map<string, number>();
      for (const t of d) m.set(t, (m.get(t) ?? 0) + 1);
      for (const t of m.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return m;
    });
    this.lengths = docs.map((d) => d.length);
    this.avgLength = this.lengths.reduce((s, n) => s + n, 0) / Math.max(1, docs.length);
  }

  get size(): number {
    return this.tf.length;
  }

  /** Inverse document frequency, the non-negative variant (Lucene's). */
  idf(term: string): number {
    const n = this.df.get(term) ?? 0;
    return Math.log(1 + (this.tf.length - n + 0.5) / (n + 0.5));
  }

  score(index: number, query: readonly string[]): Bm25Hit {
    const tf = this.tf[index]!;
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * this.lengths[index]!) / (this.avgLength || 1));
    let score = 0;
    const matched: string[] = [];
    for (const q of new Set(query)) {
      const f = tf.get(q);
      if (!f) continue;
      matched.push(q);
      score += (this.idf(q) * f * (BM25_K1 + 1)) / (f + norm);
    }
    return { index, score, matched };
  }

  /** Documents with a positive score, best first (ties: earlier document first). */
  rank(query: readonly string[]): Bm25Hit[] {
    const hits: Bm25Hit[] = [];
    for (let i = 0; i < this.tf.length; i++) {
      const h = this.score(i, query);
      if (h.score > 0) hits.push(h);
    }
    return hits.sort((a, b) => b.score - a.score || a.index - b.index);
  }
}

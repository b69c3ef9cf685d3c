import { parseDom, type DomNode } from "../web/dom.js";
import { squash } from "./terms.js";

// A source's main content cut into citable passages. The extracted text of a source is its block
// elements (paragraphs, list items, quotes, cells...) in document order, whitespace collapsed, joined
// by blank lines; a passage is one block, or a run of whole sentences of a long block, and is cited
// by its index and its character offsets in that extracted text. Headings are not passages: they name
// the section of the passages under them.

export const MAX_PASSAGE_CHARS = 700;

export type Sentence = {
  text: string;
  /** Offsets in the source's extracted text. */
  start: number;
  end: number;
}

export type Passage = {
  index: number;
  section: string | null;
  text: string;
  start: number;
  end: number;
  sentences: Sentence[];
}

export type SourceText = {
  /** The extracted text the offsets refer to. */
  text: string;
  passages: Passage[];
}

const BLOCKS = "p, li, blockquote, pre, td, th, dd, dt, figcaption, h1, h2, h3, h4, h5, h6";
const HEADING = /^H[1-6]$/;

const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });

/** Sentences of `text` (offsets relative to `text`). */
export function sentencesOf(text: string): { text: string; start: number; end: number }[] {
  const out: { text: string; start: number; end: number }[] = [];
  for (const s of segmenter.segment(text)) {
    const lead = s.segment.length - s.segment.trimStart().length;
    const body = s.segment.trim();
    if (!body) continue;
    out.push({ text: body, start: s.index + lead, end: s.index + lead + body.length });
  }
  return out;
}

interface Block {
  heading: boolean;
  text: string;
}

function blocksOf(html: string): Block[] {
  const document = parseDom(`<!doctype html><html><body>${html}</body></html>`);
  const all: DomNode[] = [...document.querySelectorAll(BLOCKS)];
  // Leaf blocks only: a list item holding a paragraph is read once, through the paragraph.
  const leaves = all.filter((el) => !el.querySelector(BLOCKS));
  const blocks = leaves.map((el) => ({ heading: HEADING.test(el.tagName), text: squash(el.textContent ?? "") })).filter((b) => b.text);
  if (blocks.length) return blocks;
  return (document.body?.textContent ?? "")
    .split(/\n\s*\n/)
    .map((t: string) => ({ heading: false, text: squash(t) }))
    .filter((b: Block) => b.text);
}

/** Cuts a source's main-content HTML into passages. */
export function passagesOf(html: string): SourceText {
  const passages: Passage[] = [];
  const parts: string[] = [];
  let length = 0;
  let section: string | null = null;
  for (const block of blocksOf(html)) {
    if (parts.length) length += 2; // the "\n\n" joining blocks
    const base = length;
    parts.push(block.text);
    length += block.text.length;
    if (block.heading) {
      section = block.text;
      continue;
    }
    // Offsets are computed from the block itself: slicing a growing string would copy it every time.
    const sentences = sentencesOf(block.text);
    let run: typeof sentences = [];
    const flush = () => {
      if (!run.length) return;
      const from = run[0]!.start;
      const to = run.at(-1)!.end;
      passages.push({
        index: passages.length,
        section,
        text: block.text.slice(from, to),
        start: base + from,
        end: base + to,
        sentences: run.map((x) => ({ text: x.text, start: base + x.start, end: base + x.end })),
      });
      run = [];
    };
    for (const x of sentences) {
      if (run.length && x.end - run[0]!.start > MAX_PASSAGE_CHARS) flush();
      run.push(x);
    }
    flush();
  }
  return { text: parts.join("\n\n"), passages };
}

import { XMLParser, XMLValidator } from "fast-xml-parser";

// Caption tracks as YouTube's timedtext endpoint serves them, in any of its three formats:
//   format 1  <transcript><text start="1.23" dur="2.5">text</text>...</transcript>   (seconds; the text
//             is HTML-escaped inside the XML, so "&amp;#39;" stands for an apostrophe)
//   format 3  <timedtext format="3"><body><p t="1230" d="2500">text or <s>word</s>s</p>...</body>
//             (milliseconds)
//   json3     {"events":[{"tStartMs":1230,"dDurationMs":2500,"segs":[{"utf8":"text"}]}...]}
// Entities are decoded (twice at most, for the doubly escaped format), whitespace collapsed, and empty
// cues dropped.

export type CaptionSegment = {
  start: number;
  duration: number;
  text: string;
}

export class CaptionFormatError extends Error {}

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–", lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«", raquo: "»", copy: "©", reg: "®", trade: "™", eacute: "é", egrave: "è", agrave: "à", ccedil: "ç", uuml: "ü", ouml: "ö", auml: "ä", szlig: "ß", ntilde: "ñ" };
const ENTITY = /&(#x[0-9a-f]+|#\d+|[a-z]+);/gi;

function decodeOnce(s: string): string {
  return s.replace(ENTITY, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name.toLowerCase()] ?? whole;
  });
}

/** HTML entities decoded; a second pass undoes the double escaping of format 1. */
export function decodeEntities(s: string): string {
  const once = decodeOnce(s);
  return once === s ? once : decodeOnce(once);
}

const clean = (s: string) => decodeEntities(s).replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();

type OrderedNode = Record<string, unknown> & { ":@"?: Record<string, string> };

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", preserveOrder: true, processEntities: false, trimValues: false, parseTagValue: false, parseAttributeValue: false });

const tagOf = (n: OrderedNode) => Object.keys(n).find((k) => k !== ":@")!;

/** All text under ordered nodes, in document order. */
function textUnder(nodes: OrderedNode[]): string {
  return nodes.map((n) => (tagOf(n) === "#text" ? String(n["#text"]) : textUnder((n[tagOf(n)] as OrderedNode[]) ?? []))).join("");
}

function* elements(nodes: OrderedNode[], tag: string): Generator<OrderedNode> {
  for (const n of nodes) {
    const t = tagOf(n);
    if (t === tag) yield n;
    else if (t !== "#text" && Array.isArray(n[t])) yield* elements(n[t] as OrderedNode[], tag);
  }
}

function fromXml(body: string): CaptionSegment[] {
  if (XMLValidator.validate(body) !== true) throw new CaptionFormatError("the caption track is not well-formed XML");
  const doc = parser.parse(body) as OrderedNode[];
  const out: CaptionSegment[] = [];
  const push = (start: number, duration: number, raw: string) => {
    const text = clean(raw);
    if (text && Number.isFinite(start)) out.push({ start, duration: Number.isFinite(duration) ? duration : 0, text });
  };
  const format3 = [...elements(doc, "timedtext")].length > 0;
  if (format3) {
    for (const p of elements(doc, "p")) push(Number(p[":@"]?.t) / 1000, Number(p[":@"]?.d ?? 0) / 1000, textUnder(p.p as OrderedNode[]));
  } else if ([...elements(doc, "transcript")].length) {
    for (const t of elements(doc, "text")) push(Number(t[":@"]?.start), Number(t[":@"]?.dur ?? 0), textUnder(t.text as OrderedNode[]));
  } else throw new CaptionFormatError("the caption track is neither a <transcript> nor a <timedtext> document");
  return out;
}

interface Json3 {
  events?: { tStartMs?: number; dDurationMs?: number; segs?: { utf8?: string }[] }[];
}

function fromJson3(body: string): CaptionSegment[] {
  let doc: Json3;
  try {
    doc = JSON.parse(body) as Json3;
  } catch {
    throw new CaptionFormatError("the caption track is not valid JSON");
  }
  if (!doc || !Array.isArray(doc.events)) throw new CaptionFormatError("the json3 caption track has no events");
  const out: CaptionSegment[] = [];
  for (const e of doc.events) {
    if (!e.segs || typeof e.tStartMs !== "number") continue; // window and style events carry no text
    const text = clean(e.segs.map((s) => s.utf8 ?? "").join(""));
    if (text) out.push({ start: e.tStartMs / 1000, duration: (e.dDurationMs ?? 0) / 1000, text });
  }
  return out;
}

/** Segments of a caption track in any of the three formats, in time order. */
export function parseCaptions(body: string): CaptionSegment[] {
  const trimmed = body.trimStart();
  if (!trimmed) throw new CaptionFormatError("the caption track is empty");
  const segments = trimmed.startsWith("{") ? fromJson3(trimmed) : fromXml(trimmed);
  return segments.sort((a, b) => a.start - b.start);
}

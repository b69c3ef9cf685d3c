import { XMLParser, XMLValidator } from "fast-xml-parser";
import { htmlToText } from "./html-text.js";

// Parses the three feed formats news sites publish, with fast-xml-parser:
//   RSS 2.0   <rss><channel><item><title/><link/><pubDate/><description/><guid/></item>
//   Atom 1.0  <feed><entry><title/><link rel="alternate" href/><published|updated/><summary|content/><id/></entry>
//   RSS 1.0   <rdf:RDF><channel/><item rdf:about><title/><link/><dc:date/><description/></item></rdf:RDF>
// The document is validated first (a malformed feed is an error, not an empty list). DOCTYPE
// entities are expanded only within the library's default limits. Item text is reduced to plain
// text; the raw summary is kept for the content-trap scan.

export type FeedFormat = "rss2" | "atom" | "rdf";

export interface FeedItem {
  title: string;
  /** The item's link (absolute, resolved against the feed URL), or null when it has none. */
  link: string | null;
  /** ISO 8601 publication (or update) time, or null when the feed gives none or an unreadable one. */
  published: string | null;
  /** Plain-text summary. */
  summary: string;
  /** The summary as the feed sent it (may be HTML), for the content-trap scan. */
  rawSummary: string;
  /** guid / id / rdf:about. */
  id: string | null;
}

export interface ParsedFeed {
  format: FeedFormat;
  title: string | null;
  items: FeedItem[];
}

export class FeedParseError extends Error {}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
});

type Node = unknown;

function asArray(v: Node): Node[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** The text of a node: a string, `#text` of an element with attributes, or the first of repeated ones. */
function textOf(v: Node): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.length ? textOf(v[0]) : "";
  if (typeof v === "object") {
    const t = (v as Record<string, unknown>)["#text"];
    return t === undefined ? "" : textOf(t);
  }
  return "";
}

function child(node: Node, ...names: string[]): Node {
  if (!node || typeof node !== "object") return undefined;
  for (const n of names) {
    const v = (node as Record<string, unknown>)[n];
    if (v !== undefined && v !== "") return v;
  }
  return undefined;
}

function isoDate(raw: string): string | null {
  if (!raw) return null;
  const t = Date.parse(raw.trim());
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

function absolute(link: string, base: string): string | null {
  if (!link) return null;
  try {
    const u = new URL(link.trim(), base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.toString() : null;
  } catch {
    return null;
  }
}

/** Atom: the `alternate` link (or the first link without a rel). */
function atomLink(entry: Node): string {
  const links = asArray(child(entry, "link", "atom:link"));
  const attr = (l: Node, a: string) => (l && typeof l === "object" ? String((l as Record<string, unknown>)[`@_${a}`] ?? "") : "");
  const alt = links.find((l) => (attr(l, "rel") || "alternate") === "alternate") ?? links[0];
  return attr(alt, "href") || textOf(alt);
}

function item(fields: { title: string; link: string; published: string; summary: string; id: string }, base: string): FeedItem {
  return {
    title: htmlToText(fields.title),
    link: absolute(fields.link, base),
    published: isoDate(fields.published),
    summary: htmlToText(fields.summary),
    rawSummary: fields.summary,
    id: fields.id || null,
  };
}

/** Parses one feed document; `feedUrl` resolves relative links. Items without a title are dropped. Throws FeedParseError. */
export function parseFeed(xml: string, feedUrl: string): ParsedFeed {
  const parsed = parseDocument(xml, feedUrl);
  return { ...parsed, items: parsed.items.filter((i) => i.title) };
}

function parseDocument(xml: string, feedUrl: string): ParsedFeed {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new FeedParseError(`malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let doc: Record<string, Node>;
  try {
    doc = parser.parse(xml) as Record<string, Node>;
  } catch (err) {
    throw new FeedParseError(`malformed XML: ${(err as Error).message}`);
  }
  const rss = child(doc, "rss");
  if (rss) {
    const channel = child(rss, "channel");
    if (!channel) throw new FeedParseError("an RSS document without a channel");
    return {
      format: "rss2",
      title: htmlToText(textOf(child(channel, "title"))) || null,
      items: asArray(child(channel, "item")).map((i) =>
        item(
          {
            title: textOf(child(i, "title")),
            link: textOf(child(i, "link")) || (/^https?:/i.test(textOf(child(i, "guid"))) ? textOf(child(i, "guid")) : ""),
            published: textOf(child(i, "pubDate", "dc:date", "atom:updated")),
            summary: textOf(child(i, "description", "content:encoded")),
            id: textOf(child(i, "guid")),
          },
          feedUrl,
        ),
      ),
    };
  }
  const feed = child(doc, "feed", "atom:feed");
  if (feed) {
    return {
      format: "atom",
      title: htmlToText(textOf(child(feed, "title"))) || null,
      items: asArray(child(feed, "entry", "atom:entry")).map((e) =>
        item(
          {
            title: textOf(child(e, "title", "atom:title")),
            link: atomLink(e),
            published: textOf(child(e, "published", "updated", "atom:published", "atom:updated")),
            summary: textOf(child(e, "summary", "content", "atom:summary", "atom:content")),
            id: textOf(child(e, "id", "atom:id")),
          },
          feedUrl,
        ),
      ),
    };
  }
  const rdf = child(doc, "rdf:RDF", "RDF");
  if (rdf) {
    return {
      format: "rdf",
      title: htmlToText(textOf(child(child(rdf, "channel"), "title"))) || null,
      items: asArray(child(rdf, "item")).map((i) =>
        item(
          {
            title: textOf(child(i, "title")),
            link: textOf(child(i, "link")) || String((i as Record<string, unknown>)["@_rdf:about"] ?? ""),
            published: textOf(child(i, "dc:date", "pubDate")),
            summary: textOf(child(i, "description", "content:encoded")),
            id: String((i as Record<string, unknown>)["@_rdf:about"] ?? ""),
          },
          feedUrl,
        ),
      ),
    };
  }
  const root = Object.keys(doc).find((k) => !k.startsWith("?")) ?? "(none)";
  throw new FeedParseError(`not an RSS, Atom or RDF feed (root element ${root})`);
}

import type { Material } from "./vendor-input.js";

// Whether a finding's quoted evidence is in the supplied materials: compared case-insensitively with
// whitespace and typographic quotes normalized; an elided quote ("a ... b", "a … b") is grounded when every
// part is. Parts shorter than MIN_QUOTE_CHARS do not count as evidence.

export const MIN_QUOTE_CHARS = 8;

export function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u201a\u201b]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f]/g, '"')
    .replace(/\s+/g, " ")
    .trim();
}

/** The sources whose text holds the quote (empty when it is not found or too short to be evidence). */
export function quoteSources(quote: string, materials: readonly Material[]): string[] {
  const parts = normalize(quote)
    .split(/\.{3}|\u2026/)
    .map((p) => p.trim().replace(/^["']+|["']+$/g, "").trim())
    .filter(Boolean);
  if (!parts.length || parts.join("").length < MIN_QUOTE_CHARS) return [];
  return materials.filter((m) => {
    const text = normalize(m.text);
    return parts.every((p) => text.includes(p));
  }).map((m) => m.source);
}

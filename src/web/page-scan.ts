import { parseDom } from "./dom.js";
import { scanContent } from "../trust/content-scan.js";

// The content-trap scan of a fetched HTML page: what an agent reading it could be steered by. That is
// the text of the whole body, hidden elements included (display:none text is the classic carrier),
// HTML comments, and JSON-LD blocks. Ordinary <script>/<style> elements are markup, not text, so they
// are left out (every real page has scripts); a literal "<script" in the text still matches.

const COMMENT = /<!--([\s\S]*?)-->/g;

/** The texts of a page the scan looks at. */
export function pageTexts(html: string): string[] {
  const document = parseDom(html);
  const texts: string[] = [];
  for (const el of [...document.querySelectorAll("script")]) {
    const type = (el.getAttribute("type") ?? "").toLowerCase();
    if (type === "application/ld+json") texts.push(el.textContent ?? "");
    el.remove();
  }
  for (const el of [...document.querySelectorAll("style")]) el.remove();
  texts.push(document.querySelector("title")?.textContent ?? "");
  texts.push(document.body?.textContent ?? document.documentElement?.textContent ?? "");
  for (const m of html.matchAll(COMMENT)) texts.push(`<!--${m[1]}-->`);
  return texts.filter((t) => t.trim() !== "");
}

/** The ids of the content-trap rules the page trips (empty when clean). */
export function scanPage(html: string): string[] {
  return scanContent(pageTexts(html));
}

import type { DomNode } from "../web/dom.js";

// Text of DOM elements with their line structure: <br> and block boundaries become line breaks, so an
// address printed on several lines can be joined with commas and a page can be read line by line.

export type El = DomNode;

const BLOCK = new Set(["P", "DIV", "LI", "TR", "TD", "TH", "DT", "DD", "DL", "UL", "OL", "TABLE", "SECTION", "ARTICLE", "HEADER", "FOOTER", "ADDRESS", "H1", "H2", "H3", "H4", "H5", "H6", "BLOCKQUOTE", "PRE", "MAIN", "NAV", "ASIDE", "FIGURE", "FIGCAPTION", "FORM", "CAPTION"]);

function walk(node: El, out: string[]): void {
  for (const child of [...node.childNodes]) {
    if (child.nodeType === 3) out.push(child.textContent ?? "");
    else if (child.nodeType === 1) {
      const tag = String(child.tagName).toUpperCase();
      if (tag === "SCRIPT" || tag === "STYLE" || tag === "TEMPLATE" || tag === "NOSCRIPT") continue;
      if (tag === "BR") {
        out.push("\n");
        continue;
      }
      const block = BLOCK.has(tag);
      if (block) out.push("\n");
      walk(child, out);
      if (block) out.push("\n");
    }
  }
}

/** The element's lines, whitespace collapsed, empty lines dropped. */
export function linesOf(el: El): string[] {
  const out: string[] = [];
  walk(el, out);
  return out
    .join("")
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .filter(Boolean);
}

/** The element's text on one line. */
export function textOf(el: El): string {
  return linesOf(el).join(" ");
}

// Feed summaries are often HTML (escaped or in CDATA): this reduces them to plain text for matching
// and scoring. Scripts, styles and comments are dropped with their content, tags are dropped, the
// common named entities and every numeric one are decoded, whitespace is collapsed.

const NAMED: Record<string, string> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", ndash: "–", mdash: "—", hellip: "…",
  lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«", raquo: "»", middot: "·", bull: "•",
  copy: "©", reg: "®", trade: "™", euro: "€", pound: "£", yen: "¥", cent: "¢", deg: "°",
};

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

export function htmlToText(html: string): string {
  const noBlocks = html.replace(/<(script|style)\b[^]*?<\/\1\s*>/gi, " ").replace(/<!--[^]*?-->/g, " ");
  const noTags = noBlocks.replace(/<\/?[a-z][^>]*>/gi, " ");
  return decodeEntities(noTags).replace(/\s+/g, " ").trim();
}

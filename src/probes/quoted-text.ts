import { CONTENT_TRAP_RULES } from "../trust/content-scan.js";

// Quoting hostile text in a deliverable: what we sent a target and what it answered are injection
// material by design, so they are defanged before they are shown (the deliverable must not become a
// carrier itself). Secrets are redacted first, then the text is cut to size, then
//   - invisible and bidirectional-control characters are shown as \uXXXX escapes;
//   - in every span that still matches a content-trap rule, each word of two letters or more gets a
//     middle dot after its first letter ("I·gnore p·revious i·nstructions") and "<" becomes "‹",
//     repeated until no rule matches (a span that resists is withheld, naming the rule).

const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/g;
const MAX_PASSES = 6;

const defang = (span: string) => span.replace(/</g, "‹").replace(/([A-Za-z0-9])([A-Za-z0-9]+)/g, "$1·$2");

export function escapeTraps(text: string): string {
  let out = text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const rule = CONTENT_TRAP_RULES.find((r) => r.pattern.test(out));
    if (!rule) return out;
    const global = new RegExp(rule.pattern.source, rule.pattern.flags.includes("g") ? rule.pattern.flags : `${rule.pattern.flags}g`);
    out = out.replace(global, defang);
  }
  for (const rule of CONTENT_TRAP_RULES) {
    const global = new RegExp(rule.pattern.source, `${rule.pattern.flags.replace("g", "")}g`);
    out = out.replace(global, () => `[withheld: content-trap rule ${rule.id}]`);
  }
  return out;
}

export interface SecretPattern {
  id: string;
  re: RegExp;
}

export function secretPatterns(list: { id: string; pattern: string }[]): SecretPattern[] {
  return list.map((s) => ({ id: s.id, re: new RegExp(s.pattern, "g") }));
}

/** The text with every credential-shaped string replaced by `[redacted:<kind>]`, and the kinds found. */
export function redactSecrets(text: string, patterns: SecretPattern[]): { text: string; found: string[] } {
  const found = new Set<string>();
  let out = text;
  for (const p of patterns) {
    out = out.replace(new RegExp(p.re.source, "g"), () => {
      found.add(p.id);
      return `[redacted:${p.id}]`;
    });
  }
  return { text: out, found: [...found] };
}

export interface Quoted {
  excerpt: string;
  truncated: boolean;
  chars: number;
}

/** Redacted, cut to `max` characters, then defanged. */
export function quote(text: string, patterns: SecretPattern[], max: number): Quoted {
  const redacted = redactSecrets(text, patterns).text;
  const cut = redacted.length > max ? redacted.slice(0, max) : redacted;
  return { excerpt: escapeTraps(cut), truncated: redacted.length > max, chars: text.length };
}

// The content-trap scan: patterns of prompt injection and hidden instructions in text an agent will
// read. Each rule has a stable id; a match reports the rule, never the matched text.

export interface ScanRule {
  id: string;
  pattern: RegExp;
}

export const CONTENT_TRAP_RULES: readonly ScanRule[] = [
  { id: "injection.ignore_instructions", pattern: /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|preceding)\s+(instructions|prompts|rules|directions)/i },
  { id: "injection.role_override", pattern: /\b(you are now|from now on you are|new system prompt|act as (the )?(system|developer|admin))\b/i },
  { id: "injection.system_prompt_probe", pattern: /\b(reveal|print|show|repeat)\b.{0,30}\b(system prompt|hidden instructions|initial instructions)\b/i },
  { id: "exfiltration.secret_request", pattern: /\b(send|reveal|paste|share|export)\b.{0,40}\b(private key|seed phrase|mnemonic|api[ _-]?key|password)\b/i },
  { id: "hidden.zero_width", pattern: /[\u200B-\u200D\u2060\uFEFF]/ },
  { id: "hidden.bidi_override", pattern: /[\u202A-\u202E\u2066-\u2069]/ },
  { id: "markup.script", pattern: /<script\b/i },
  { id: "markup.hidden_comment_instruction", pattern: /<!--[^]*?\b(instruction|ignore|assistant|system)\b[^]*?-->/i },
];

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) strings(v, out);
  return out;
}

/** The ids of the rules that match any string inside `value`. */
export function scanContent(value: unknown): string[] {
  const texts = strings(value, []);
  // One pass over all the strings joined: a rule that matches no string cannot match the joined text (no
  // rule is anchored), so only a hit needs the per-string check that rules out a match across two strings.
  const joined = texts.join("\n\n");
  return CONTENT_TRAP_RULES.filter((rule) => rule.pattern.test(joined) && texts.some((t) => rule.pattern.test(t))).map((r) => r.id);
}

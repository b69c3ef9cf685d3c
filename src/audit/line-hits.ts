import { excerpt, type Hit } from "./finding.js";
import type { SourceFile } from "./source-file.js";

// Most rules judge one line at a time: `lineHits` runs such a check over a file's code lines and makes
// each rule the check names for a line a hit on that line, with the line as evidence.

type MaybeRule = string | false | null | undefined;

/** The rules a line breaks: one rule id, a list, or nothing (false, null and undefined name no rule). */
export type LineRules = MaybeRule | MaybeRule[];

export function lineHits(f: SourceFile, check: (line: string, i: number) => LineRules): Hit[] {
  const hits: Hit[] = [];
  f.code.forEach((line, i) => {
    const rules = check(line, i);
    for (const rule of Array.isArray(rules) ? rules : [rules]) if (rule) hits.push({ rule, file: f.index, line: i + 1, evidence: excerpt(line) });
  });
  return hits;
}

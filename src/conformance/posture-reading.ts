import type { ConformanceData } from "./frameworks.js";

// Reading a buyer's stated posture into facts (the matching rules, documented in posture-facts.yaml and
// the README). Everything here is the buyer's own declaration: evidence class `self_declared`.
//
// Structured `posture`: every leaf of the object is one reading. Its key path, normalized (lower case,
// non-alphanumerics -> "_", segments joined with "_", one trailing status word such as _enabled
// dropped), must equal a fact's key; failing that, the longest prefix of the path that does is used
// (so {"mfa": {"scope": "all staff"}} reads as `mfa`) as a detail reading, which counts only when the
// fact has no direct reading. The value decides the reading:
//   true, a positive number, a non-empty array, any other non-empty string ("AES-256") -> affirmed
//   false, 0, an empty array, "no"/"none"/"disabled"/"off"/"absent"/"not implemented"... -> denied
//   "partial"/"planned"/"in progress"/"pilot"/"roadmap"/"limited"/"draft"             -> partial
//   "n/a"/"not applicable"                                                              -> not_applicable
//   null, "", "unknown", "tbd"                                                          -> unstated (ignored)
// Free-text `statements`: each is cut into clauses at . ; ! ? new lines and but/however/except; a fact's
// phrase found in a clause (whole words, case-insensitive, spaces also match hyphens, plural allowed)
// is a reading of that clause: denied if the clause has a negation (no, not, never, without, lack,
// don't, isn't, ...), else partial if it has a planning word (plan(ned), roadmap, in progress, working
// on, pilot, partially, some, will implement/deploy/...), else affirmed.

export type Reading = "affirmed" | "partial" | "denied" | "not_applicable";

export interface FactReading {
  fact: string;
  source: "posture" | "statement";
  /** The posture key path as given (a.b.c), or `statements[i]`. */
  location: string;
  /** For posture: the value (JSON, truncated); for statements: the clause. */
  value: string;
  /** The key or phrase that matched. */
  matched: string;
  reading: Reading;
  /** A posture reading through a prefix of its key path (a detail of the fact, not its status). */
  detail: boolean;
}

export interface PostureReadings {
  readings: FactReading[];
  /** Posture key paths that name no fact. */
  unmappedKeys: string[];
  /** Indexes of statements that named no fact. */
  unmatchedStatements: number[];
}

const STATUS_SUFFIX = /_(enabled|implemented|in_place|status|present|exists|active|documented|in_effect|policy_exists)$/;
const segment = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
const MAX_DEPTH = 4;
const MAX_VALUE_CHARS = 200;

const DENIED = new Set(["no", "n", "none", "false", "disabled", "off", "absent", "missing", "never", "not implemented", "not in place", "not enabled", "not yet", "0"]);
const PARTIAL = new Set(["partial", "partially", "planned", "in progress", "pilot", "piloting", "roadmap", "limited", "draft", "some", "partly"]);
const NOT_APPLICABLE = new Set(["n/a", "na", "not applicable"]);
const UNSTATED = new Set(["", "unknown", "tbd", "unsure"]);

/** How a posture value reads; undefined when it states nothing. */
export function readValue(value: unknown): Reading | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "boolean") return value ? "affirmed" : "denied";
  if (typeof value === "number") return value > 0 ? "affirmed" : "denied";
  if (Array.isArray(value)) return value.length ? "affirmed" : "denied";
  if (typeof value === "string") {
    const v = value.trim().toLowerCase().replace(/[\s_-]+/g, " ");
    if (UNSTATED.has(v)) return undefined;
    if (NOT_APPLICABLE.has(v)) return "not_applicable";
    if (DENIED.has(v)) return "denied";
    if (PARTIAL.has(v)) return "partial";
    return "affirmed";
  }
  return undefined;
}

function leaves(value: unknown, path: string[], out: { path: string[]; value: unknown }[]): void {
  if (value && typeof value === "object" && !Array.isArray(value) && path.length < MAX_DEPTH) {
    for (const [k, v] of Object.entries(value)) leaves(v, [...path, k], out);
  } else out.push({ path, value });
}

function keyFact(data: ConformanceData, normalized: string): { fact: string; key: string } | undefined {
  const direct = data.keyIndex.get(normalized);
  if (direct) return { fact: direct, key: normalized };
  const stripped = normalized.replace(STATUS_SUFFIX, "");
  const fact = stripped !== normalized ? data.keyIndex.get(stripped) : undefined;
  return fact ? { fact, key: stripped } : undefined;
}

function show(value: unknown): string {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
}

export function readPosture(data: ConformanceData, posture: Record<string, unknown>): Pick<PostureReadings, "readings" | "unmappedKeys"> {
  const readings: FactReading[] = [];
  const unmappedKeys: string[] = [];
  const found: { path: string[]; value: unknown }[] = [];
  leaves(posture, [], found);
  for (const { path, value } of found) {
    if (!path.length) continue;
    const segments = path.map(segment).filter(Boolean);
    let match = keyFact(data, segments.join("_"));
    let detail = false;
    for (let n = segments.length - 1; !match && n >= 1; n--) {
      match = keyFact(data, segments.slice(0, n).join("_"));
      detail = match !== undefined;
    }
    if (!match) {
      unmappedKeys.push(path.join("."));
      continue;
    }
    const reading = readValue(value);
    if (reading === undefined) continue;
    readings.push({ fact: match.fact, source: "posture", location: path.join("."), value: show(value), matched: match.key, reading, detail });
  }
  return { readings, unmappedKeys };
}

const NEGATION = /\b(no|not|never|without|lack|lacks|lacking|none|neither|nor|cannot|can't|don't|doesn't|didn't|haven't|hasn't|isn't|aren't|won't|wasn't|weren't|dont|doesnt|havent|hasnt|isnt|arent)\b/i;
const PLANNING = /\b(plan|plans|planned|planning|roadmap|in progress|working on|intend|intends|pilot|piloting|partially|partial|some|will (implement|introduce|adopt|deploy|roll out|add|enable|start|begin))\b/i;
const CLAUSE_BREAK = /[.;!?\n]+|\b(?:but|however|except)\b/i;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A phrase as a whole-word, case-insensitive pattern: a space also matches hyphens or several spaces; a plural ending is allowed. */
export function phrasePattern(phrase: string): RegExp {
  const body = phrase.trim().split(/[\s-]+/).map(escapeRe).join("[\\s-]+");
  const start = /^\w/.test(phrase) ? "\\b" : "";
  const end = /\w$/.test(phrase) ? "(?:s|es)?\\b" : "";
  return new RegExp(`${start}${body}${end}`, "i");
}

export function readStatements(data: ConformanceData, statements: string[]): Pick<PostureReadings, "readings" | "unmatchedStatements"> {
  const patterns = data.vocabulary.facts.map((f) => ({ fact: f.id, phrases: f.phrases.map((p) => ({ p, re: phrasePattern(p) })) }));
  const readings: FactReading[] = [];
  const unmatchedStatements: number[] = [];
  statements.forEach((statement, i) => {
    let any = false;
    const text = statement.replace(/[\u2018\u2019]/g, "'");
    for (const clause of text.split(CLAUSE_BREAK).map((c) => (c ?? "").trim()).filter(Boolean)) {
      for (const { fact, phrases } of patterns) {
        const hit = phrases.find(({ re }) => re.test(clause));
        if (!hit) continue;
        any = true;
        const reading: Reading = NEGATION.test(clause) ? "denied" : PLANNING.test(clause) ? "partial" : "affirmed";
        readings.push({ fact, source: "statement", location: `statements[${i}]`, value: show(clause), matched: hit.p, reading, detail: false });
      }
    }
    if (!any) unmatchedStatements.push(i);
  });
  return { readings, unmatchedStatements };
}

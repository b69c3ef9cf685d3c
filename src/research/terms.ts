// Terms of a text for ranking and support checks: lower-cased words and numbers, English stop words
// dropped, a light suffix-stripping stemmer so "settles", "settled" and "settling" meet.

const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by can
  could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i
  if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over
  own same she should so some such than that the their theirs them themselves then there these they this those through to too under
  until up very was we were what when where which while who whom why will with would you your yours yourself yourselves may might
  must shall via per etc e g i e s t vs us`.split(/\s+/),
);

const TOKEN = /\p{L}[\p{L}\p{M}\p{N}'’]*|\d+(?:[.,]\d+)*/gu;

/** A crude English stemmer: enough to match inflections, not a linguistic one. */
export function stem(word: string): string {
  let w = word.replace(/['’]s$/, "").replace(/['’]/g, "");
  if (w.length <= 3 || /^\d/.test(w)) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (/(ss|us|is)$/.test(w)) return w;
  else if (/(sses|xes|ches|shes|zes)$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith("s")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  else if (w.length > 5 && w.endsWith("ly")) w = w.slice(0, -2);
  if (/(.)\1$/.test(w) && !/(ll|ss|zz)$/.test(w) && w.length > 3) w = w.slice(0, -1);
  if (w.endsWith("e") && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** Every term of `text` in order (repeats kept), stop words removed. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(TOKEN)) {
    const t = m[0];
    if (STOP_WORDS.has(t)) continue;
    if (t.length < 2 && !/\d/.test(t)) continue;
    out.push(/^\d/.test(t) ? t.replace(/,(?=\d{3}\b)/g, "") : stem(t));
  }
  return out;
}

/** The numbers written in `text` (thousands separators dropped), e.g. "1,250.5" -> "1250.5". */
export function numbersOf(text: string): string[] {
  return [...text.matchAll(/\d+(?:[.,]\d+)*/g)].map((m) => m[0].replace(/,(?=\d{3}\b)/g, ""));
}

/** Whitespace collapsed, trimmed. */
export function squash(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

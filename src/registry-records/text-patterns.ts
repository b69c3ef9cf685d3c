import { DATE_IN_TEXT } from "./dates.js";
import { classifyLabel, OFFICER_ROLES } from "./labels.js";
import { linesOf, textOf, type El } from "./dom-text.js";
import { emptyFindings, plainAddress, type Findings, type ScalarField } from "./record-types.js";

// Registry values written as text: "Label: value" lines, a label on its own line followed by its
// value, sentences such as "ACME LTD is a private limited company incorporated on 12 March 2001 with
// company number 01234567", and officers as "Director: Jane Smith" or "Jane Smith, Director
// (appointed 1 May 2015)". Tables and definition lists are left to their own readers. The page's
// main heading is the company name of last resort.

const snippet = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
const ROLE = new RegExp(`^(?:${OFFICER_ROLES})(?:\\s+(?:and|&)\\s+(?:${OFFICER_ROLES}))?$`, "i");
const NAME = /^(?:[A-Z][A-Za-z'’.-]*,? ){1,4}[A-Z][A-Za-z'’.-]*$/;
const APPOINTED = new RegExp(`\\s*[,;(]?\\s*appointed(?: on)? (${DATE_IN_TEXT.source.slice(3, -3)})\\)?\\s*$`, "i");
const RESIGNED = new RegExp(`\\s*[,;(]?\\s*(?:resigned|ceased)(?: on)? (${DATE_IN_TEXT.source.slice(3, -3)})\\)?\\s*$`, "i");

const DATE = DATE_IN_TEXT.source.slice(3, -3);
const SENTENCES: { field: ScalarField; re: RegExp }[] = [
  { field: "registration_number", re: /\b(?:company|registration|registered|entity|file|corporate|charter|incorporation) (?:number|no\.?)(?: is)?\s*[:#]?\s*([A-Z]{0,3}\d[0-9A-Z-]{3,14})\b/i },
  { field: "incorporation_date", re: new RegExp(`\\b(?:incorporated|formed|registered|organi[sz]ed)(?: (?:in|under the laws of) [A-Z][A-Za-z ]{2,30}?)? on (?:the )?(${DATE})`, "i") },
  {
    field: "status",
    re: /\b(?:company |entity |registration )?status(?: is)?\s*[:\-–]?\s*(active(?: - good standing)?|dissolved|in liquidation|liquidation|inactive|struck[ -]off|closed|in administration|administration|good standing|revoked|suspended|dormant|live|removed|receivership)\b/i,
  },
  { field: "status", re: /\bis (?:an? |now )?(active|dissolved|dormant|inactive|live|struck[ -]off) (?:company|corporation|entity|business|partnership|llc)\b/i },
  {
    field: "company_type",
    re: /\bis an? ((?:private|public) (?:limited|unlimited) company(?: limited by (?:shares|guarantee))?|public limited company|limited liability (?:company|partnership)|(?:domestic |foreign )?(?:business |nonprofit |non-profit |professional )?corporation|limited partnership|general partnership|sole proprietorship|community interest company|charitable incorporated organisation)\b/i,
  },
  { field: "jurisdiction", re: /\b(?:incorporated|registered|organi[sz]ed|formed) (?:in|under the laws of) (?:the (?:State|Province|Commonwealth) of )?([A-Z][a-z]+(?: (?:and )?[A-Z][a-z]+){0,3})\b/ },
];

function officerOf(line: string): { name: string; role: string; appointed: string | null; resigned: string | null } | undefined {
  let rest = line;
  const appointed = APPOINTED.exec(rest);
  if (appointed) rest = rest.slice(0, appointed.index);
  const resigned = RESIGNED.exec(rest);
  if (resigned) rest = rest.slice(0, resigned.index);
  const paren = /^(.+?)\s*\((.+?)\)$/.exec(rest);
  const split = paren ?? /^(.{2,60}?)\s*(?:[:–—]|,| - )\s*(.{2,80})$/.exec(rest);
  if (!split) return undefined;
  const [a, b] = [split[1]!.trim(), split[2]!.trim()];
  const dates = { appointed: appointed?.[1] ?? null, resigned: resigned?.[1] ?? null };
  if (ROLE.test(a) && NAME.test(b) && !classifyLabel(b)) return { name: b, role: a, ...dates };
  if (NAME.test(a) && ROLE.test(b) && !classifyLabel(a)) return { name: a, role: b, ...dates };
  return undefined;
}

/** `document` should not be needed afterwards: tables and definition lists are removed from it. */
export function fromText(document: El): Findings {
  const f = emptyFindings();
  for (const el of [...document.querySelectorAll("table, dl, script, style, nav, footer")]) el.remove();
  const body = document.body ?? document.documentElement;
  const lines = body ? linesOf(body) : [];
  const labelOnly = (l: string) => !/[:：]/.test(l) && classifyLabel(l);
  lines.forEach((line, i) => {
    const where = (s = line) => ({ method: "text" as const, where: `line ${i + 1}: "${snippet(s)}"` });
    const colon = /^([^:：]{2,60})[:：]\s*(.+)$/.exec(line);
    const target = colon ? classifyLabel(colon[1]!) : undefined;
    if (colon && target) {
      if ("address" in target) f.addresses.push(plainAddress(target.address, colon[2]!.trim(), where()));
      else f.scalars.push({ field: target.field, value: colon[2]!.trim(), provenance: where() });
      return;
    }
    const alone = labelOnly(line);
    if (alone && i + 1 < lines.length && !classifyLabel(lines[i + 1]!.split(/[:：]/)[0]!)) {
      if ("address" in alone) {
        const parts: string[] = [];
        for (let j = i + 1; j < lines.length && parts.length < 5 && !classifyLabel(lines[j]!.split(/[:：]/)[0]!); j++) parts.push(lines[j]!);
        f.addresses.push(plainAddress(alone.address, parts.join(", "), where(`${line} / ${parts.join(" / ")}`)));
      } else f.scalars.push({ field: alone.field, value: lines[i + 1]!, provenance: where(`${line} / ${lines[i + 1]}`) });
      return;
    }
    const officer = officerOf(line);
    if (officer) f.officers.push({ name: officer.name, role: officer.role, appointed_on: officer.appointed, resigned_on: officer.resigned, provenance: where() });
  });
  const all = lines.join("\n");
  for (const { field, re } of SENTENCES) {
    const m = re.exec(all);
    if (m) f.scalars.push({ field, value: m[1]!.trim(), provenance: { method: "text", where: `text: "${snippet(m[0].replace(/\s+/g, " "))}"` } });
  }
  return f;
}

/** The page's main heading (h1, else og:title), the company name of last resort. */
export function fromHeading(document: El): Findings {
  const f = emptyFindings();
  const h1 = document.querySelector("h1");
  const og = document.querySelector('meta[property="og:title"]')?.getAttribute("content");
  const name = (h1 && textOf(h1)) || og?.trim();
  if (name) f.scalars.push({ field: "company_name", value: name, provenance: { method: "heading", where: h1 && textOf(h1) ? "h1" : 'meta[property="og:title"]' } });
  return f;
}

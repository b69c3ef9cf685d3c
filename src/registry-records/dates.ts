// Dates as registries print them, normalized to ISO 8601 (YYYY-MM-DD) when that is unambiguous:
// "2001-03-12", "12 March 2001", "March 12, 2001", "12.03.2001" (day first) and slashed dates whose day
// is above 12. "03/04/2001" could be either and stays un-normalized (iso null); the printed value is
// always kept.

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

function iso(y: number, m: number, d: number): string | null {
  const t = new Date(Date.UTC(y, m - 1, d));
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null;
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

const month = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;
const MONTH = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?";

/** A date found anywhere in `text`, as written. */
export const DATE_IN_TEXT = new RegExp(`\\b(\\d{4}-\\d{2}-\\d{2}|\\d{1,2}(?:st|nd|rd|th)? ${MONTH},? \\d{4}|${MONTH} \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}|\\d{1,2}[./]\\d{1,2}[./]\\d{4})\\b`, "i");

export function toIsoDate(raw: string): string | null {
  const s = raw.trim();
  let m = /^(\d{4})-(\d{2})-(\d{2})(?:T.*)?$/.exec(s);
  if (m) return iso(+m[1]!, +m[2]!, +m[3]!);
  m = new RegExp(`^(\\d{1,2})(?:st|nd|rd|th)? ${MONTH},? (\\d{4})$`, "i").exec(s);
  if (m) return iso(+m[3]!, month(m[2]!), +m[1]!);
  m = new RegExp(`^${MONTH} (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})$`, "i").exec(s);
  if (m) return iso(+m[3]!, month(m[1]!), +m[2]!);
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(s);
  if (m) return iso(+m[3]!, +m[2]!, +m[1]!);
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s);
  if (m) {
    const [a, b, y] = [+m[1]!, +m[2]!, +m[3]!];
    if (a > 12 && b <= 12) return iso(y, b, a);
    if (b > 12 && a <= 12) return iso(y, a, b);
  }
  return null;
}

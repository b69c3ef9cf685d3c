import { parseDom } from "../web/dom.js";
import { toIsoDate } from "./dates.js";
import { fromJsonLd, parseJsonLdBlocks } from "./json-ld.js";
import { METHODS, SCALAR_FIELDS, type AddressCandidate, type Findings, type Method, type OfficerCandidate, type Provenance, type ScalarField } from "./record-types.js";
import { fromDefinitionLists, fromTables } from "./tables.js";
import { fromHeading, fromText } from "./text-patterns.js";

// One registry record from one page. Every method runs; for each field the value of the most
// structured method wins (JSON-LD, then tables, definition lists, text, the heading), and a different
// value found by another method is kept as an alternative so a disagreement on the page is visible.
// Addresses and officers are merged across methods (same normalized text or name = one entry, the
// more structured one kept, missing details filled from the others).

export type FieldValue = {
  value: string;
  provenance: Provenance;
  alternatives: { value: string; provenance: Provenance }[];
}

export type DateFieldValue = FieldValue & {
  /** ISO 8601 date when the printed value is unambiguous, else null. */
  iso: string | null;
};

export type RegistryRecord = {
  company_name: FieldValue | null;
  registration_number: FieldValue | null;
  status: FieldValue | null;
  incorporation_date: DateFieldValue | null;
  dissolution_date: DateFieldValue | null;
  company_type: FieldValue | null;
  jurisdiction: FieldValue | null;
  addresses: AddressCandidate[];
  officers: (OfficerCandidate & { appointed_on_iso: string | null; resigned_on_iso: string | null })[];
  methods_used: Method[];
}

const rank = (m: Method) => METHODS.indexOf(m);
const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
/** "SMITH, John Andrew" and "John Andrew Smith" are the same person. */
const personKey = (name: string) => norm(name).split(" ").sort().join(" ");

function pick(candidates: Findings["scalars"], field: ScalarField): FieldValue | null {
  const mine = candidates.filter((c) => c.field === field).sort((a, b) => rank(a.provenance.method) - rank(b.provenance.method));
  const best = mine[0];
  if (!best) return null;
  const seen = new Set([norm(best.value)]);
  const alternatives: FieldValue["alternatives"] = [];
  for (const c of mine.slice(1)) {
    if (seen.has(norm(c.value))) continue;
    seen.add(norm(c.value));
    alternatives.push({ value: c.value, provenance: c.provenance });
  }
  return { value: best.value, provenance: best.provenance, alternatives };
}

function dated(v: FieldValue | null): DateFieldValue | null {
  return v && { ...v, iso: toIsoDate(v.value) };
}

function mergeAddresses(all: AddressCandidate[]): AddressCandidate[] {
  const out: AddressCandidate[] = [];
  for (const a of [...all].sort((x, y) => rank(x.provenance.method) - rank(y.provenance.method))) {
    const same = out.find((o) => norm(o.text) === norm(a.text));
    if (!same) out.push(a);
    else if (same.kind === "other" && a.kind !== "other") same.kind = a.kind;
  }
  return out;
}

function mergeOfficers(all: OfficerCandidate[]): OfficerCandidate[] {
  const out: OfficerCandidate[] = [];
  for (const o of [...all].sort((x, y) => rank(x.provenance.method) - rank(y.provenance.method))) {
    const same = out.find((x) => personKey(x.name) === personKey(o.name) && (!x.role || !o.role || norm(x.role) === norm(o.role) || x.provenance.method !== o.provenance.method));
    if (!same) out.push({ ...o });
    else {
      same.role ??= o.role;
      same.appointed_on ??= o.appointed_on;
      same.resigned_on ??= o.resigned_on;
    }
  }
  return out;
}

/** JSON-LD blocks of a page (their raw text, in page order). */
export function jsonLdBlocksOf(html: string): string[] {
  return [...parseDom(html).querySelectorAll("script")].filter((s: { getAttribute(n: string): string | null }) => (s.getAttribute("type") ?? "").toLowerCase().trim() === "application/ld+json").map((s: { textContent: string | null }) => s.textContent ?? "");
}

/** Extracts the record from an HTML page, or from a bare JSON-LD document when `json` is set. */
export function extractRecord(body: string, json = false): RegistryRecord {
  const found: Findings[] = [];
  found.push(fromJsonLd(parseJsonLdBlocks(json ? [body] : jsonLdBlocksOf(body))));
  if (!json) {
    found.push(fromTables(parseDom(body)));
    found.push(fromDefinitionLists(parseDom(body)));
    found.push(fromText(parseDom(body)));
    found.push(fromHeading(parseDom(body)));
  }
  const scalars = found.flatMap((f) => f.scalars);
  const fields = Object.fromEntries(SCALAR_FIELDS.map((f) => [f, pick(scalars, f)])) as Record<ScalarField, FieldValue | null>;
  const officers = mergeOfficers(found.flatMap((f) => f.officers)).map((o) => ({ ...o, appointed_on_iso: o.appointed_on ? toIsoDate(o.appointed_on) : null, resigned_on_iso: o.resigned_on ? toIsoDate(o.resigned_on) : null }));
  const addresses = mergeAddresses(found.flatMap((f) => f.addresses));
  const record: Omit<RegistryRecord, "methods_used"> = {
    ...fields,
    incorporation_date: dated(fields.incorporation_date),
    dissolution_date: dated(fields.dissolution_date),
    addresses,
    officers,
  };
  const used = new Set<Method>();
  for (const f of SCALAR_FIELDS) {
    const v = record[f];
    if (v) used.add(v.provenance.method);
  }
  for (const x of [...addresses, ...officers]) used.add(x.provenance.method);
  return { ...record, methods_used: METHODS.filter((m) => used.has(m)) };
}

/** Fields that make a registry record (the name alone does not: any page has a heading). */
export function registryFieldsOf(r: RegistryRecord): string[] {
  const out: string[] = SCALAR_FIELDS.filter((f) => f !== "company_name" && r[f] !== null);
  if (r.addresses.length) out.push("addresses");
  if (r.officers.length) out.push("officers");
  return out;
}

import { classifyLabel } from "./labels.js";
import { emptyFindings, type AddressCandidate, type AddressKind, type Findings, type Provenance } from "./record-types.js";

// schema.org Organization data in JSON-LD blocks: legalName/name, identifier (text or PropertyValue),
// taxID/vatID, foundingDate, dissolutionDate, address (PostalAddress or text), additionalProperty
// (PropertyValue named like a registry label), and people: founder, employee, member (a Person, or a
// Role such as OrganizationRole wrapping one, with roleName and startDate/endDate).

type Node = Record<string, unknown>;

const ORG_TYPE = /^(Organization|Corporation|LocalBusiness|NGO|GovernmentOrganization|NonprofitOrganization|OnlineBusiness|Company|LegalEntity|ProfessionalService)$/i;
const ROLE_TYPE = /Role$/;
const PERSON_KEYS = [
  ["founder", "Founder"],
  ["founders", "Founder"],
  ["employee", "Employee"],
  ["employees", "Employee"],
  ["member", "Member"],
  ["members", "Member"],
] as const;

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]);
const typesOf = (n: Node): string[] => list(n["@type"]).filter((t): t is string => typeof t === "string").map((t) => t.replace(/^https?:\/\/schema\.org\//, ""));
const text = (v: unknown): string | undefined => {
  if (typeof v === "string") return v.trim() || undefined;
  if (typeof v === "number") return String(v);
  if (isNode(v)) return text(v.name ?? v["@value"] ?? v.value);
  return undefined;
};

/** All nodes of a JSON-LD document (top level, arrays, @graph, nested objects). */
function nodesOf(doc: unknown, out: Node[] = []): Node[] {
  if (Array.isArray(doc)) for (const d of doc) nodesOf(d, out);
  else if (isNode(doc)) {
    out.push(doc);
    for (const [k, v] of Object.entries(doc)) if (k === "@graph" || typeof v === "object") nodesOf(v, out);
  }
  return out;
}

/** Parses the JSON-LD blocks; a block that is not JSON is skipped. */
export function parseJsonLdBlocks(blocks: readonly string[]): { index: number; doc: unknown }[] {
  const out: { index: number; doc: unknown }[] = [];
  blocks.forEach((raw, index) => {
    try {
      out.push({ index, doc: JSON.parse(raw) });
    } catch {
      // Pages ship broken JSON-LD often enough; the other methods still run.
    }
  });
  return out;
}

function address(v: unknown, kind: AddressKind, provenance: Provenance): AddressCandidate | undefined {
  if (typeof v === "string") return v.trim() ? { kind, text: v.trim(), street: null, locality: null, region: null, postal_code: null, country: null, provenance } : undefined;
  if (!isNode(v)) return undefined;
  const street = text(v.streetAddress) ?? null;
  const locality = text(v.addressLocality) ?? null;
  const region = text(v.addressRegion) ?? null;
  const postal = text(v.postalCode) ?? null;
  const country = text(v.addressCountry) ?? null;
  const parts = [street, locality, region, postal, country].filter(Boolean);
  if (!parts.length) return undefined;
  const labelled = text(v.name) ?? text(v.description) ?? text(v.contactType);
  const k = labelled ? classifyLabel(labelled) : undefined;
  return { kind: k && "address" in k ? k.address : kind, text: parts.join(", "), street, locality, region, postal_code: postal, country, provenance };
}

function personName(v: unknown): string | undefined {
  if (typeof v === "string") return v.trim() || undefined;
  if (!isNode(v)) return undefined;
  return text(v.name) ?? ([text(v.givenName), text(v.familyName)].filter(Boolean).join(" ") || undefined);
}

function bestOrg(nodes: Node[]): Node | undefined {
  const orgs = nodes.filter((n) => typesOf(n).some((t) => ORG_TYPE.test(t)));
  const weight = (n: Node) => ["legalName", "identifier", "taxID", "foundingDate", "address", "founder", "employee", "member", "additionalProperty"].filter((k) => n[k] !== undefined).length;
  return orgs.sort((a, b) => weight(b) - weight(a))[0];
}

export function fromJsonLd(docs: readonly { index: number; doc: unknown }[]): Findings {
  const f = emptyFindings();
  for (const { index, doc } of docs) {
    const org = bestOrg(nodesOf(doc));
    if (!org) continue;
    const at = (path: string): Provenance => ({ method: "json-ld", where: `ld+json[${index}] ${path}` });
    const scalar = (field: Findings["scalars"][number]["field"], value: string | undefined, path: string) => {
      if (value) f.scalars.push({ field, value, provenance: at(path) });
    };
    scalar("company_name", text(org.legalName), "legalName");
    scalar("company_name", text(org.name), "name");
    // identifier: text, or PropertyValue(s); registry-looking property ids first.
    const ids = list(org.identifier).map((v, i) => ({ v, i, id: isNode(v) ? (text(v.propertyID) ?? text(v.name) ?? "") : "" }));
    ids.sort((a, b) => Number(/compan|regist|crn|number|kvk|siren|hrb|file/i.test(b.id)) - Number(/compan|regist|crn|number|kvk|siren|hrb|file/i.test(a.id)));
    for (const { v, i, id } of ids) {
      const value = isNode(v) ? text(v.value) : text(v);
      scalar("registration_number", value, `identifier${Array.isArray(org.identifier) ? `[${i}]` : ""}${id ? ` (${id})` : ""}`);
    }
    scalar("registration_number", text(org.taxID), "taxID");
    scalar("registration_number", text(org.vatID), "vatID");
    scalar("incorporation_date", text(org.foundingDate), "foundingDate");
    scalar("dissolution_date", text(org.dissolutionDate), "dissolutionDate");
    if (text(org.dissolutionDate)) scalar("status", "Dissolved", "dissolutionDate (present)");
    const place = isNode(org.foundingLocation) ? text(org.foundingLocation.name) : text(org.foundingLocation);
    scalar("jurisdiction", place, "foundingLocation");
    list(org.additionalProperty).forEach((p, i) => {
      if (!isNode(p)) return;
      const name = text(p.name) ?? text(p.propertyID);
      const value = text(p.value);
      const target = name ? classifyLabel(name) : undefined;
      if (!target || !value) return;
      const path = `additionalProperty[${i}] (${name})`;
      if ("field" in target) scalar(target.field, value, path);
      else f.addresses.push({ kind: target.address, text: value, street: null, locality: null, region: null, postal_code: null, country: null, provenance: at(path) });
    });
    list(org.address).forEach((a, i) => {
      const found = address(a, "other", at(Array.isArray(org.address) ? `address[${i}]` : "address"));
      if (found) f.addresses.push(found);
    });
    list(org.location).forEach((l, i) => {
      const found = isNode(l) ? address(l.address, "business", at(`location${Array.isArray(org.location) ? `[${i}]` : ""}.address`)) : undefined;
      if (found) f.addresses.push(found);
    });
    for (const [key, defaultRole] of PERSON_KEYS) {
      list(org[key]).forEach((p, i) => {
        const path = `${key}${Array.isArray(org[key]) ? `[${i}]` : ""}`;
        if (isNode(p) && typesOf(p).some((t) => ROLE_TYPE.test(t))) {
          // A Role wraps the person under the same property name (member.member, employee.employee...).
          const who = p[key.replace(/s$/, "")] ?? p.member ?? p.employee ?? p.founder;
          const name = personName(who);
          if (name) f.officers.push({ name, role: text(p.roleName) ?? text(p.namedPosition) ?? defaultRole, appointed_on: text(p.startDate) ?? null, resigned_on: text(p.endDate) ?? null, provenance: at(path) });
          return;
        }
        const name = personName(p);
        if (name) f.officers.push({ name, role: (isNode(p) && text(p.jobTitle)) || defaultRole, appointed_on: null, resigned_on: null, provenance: at(path) });
      });
    }
  }
  return f;
}

import type { FieldValue, RegistryRecord } from "./record.js";

// The record as Markdown (the deliverable's `content_markdown`), each value with where it was found.

const LABELS: [keyof RegistryRecord, string][] = [
  ["company_name", "Company name"],
  ["registration_number", "Registration number"],
  ["status", "Status"],
  ["incorporation_date", "Incorporated"],
  ["dissolution_date", "Dissolved"],
  ["company_type", "Company type"],
  ["jurisdiction", "Jurisdiction"],
];

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\s+/g, " ");
const from = (p: { method: string; where: string }) => `${p.method}: ${p.where}`;

export function recordMarkdown(r: RegistryRecord, sourceUrl: string, fetchedAt: string): string {
  const title = r.company_name?.value ?? "Registry record";
  const out = [`# ${cell(title)}`, "", `Extracted from ${sourceUrl} at ${fetchedAt}.`, "", "| Field | Value | Found by |", "|---|---|---|"];
  for (const [key, label] of LABELS) {
    const v = r[key] as (FieldValue & { iso?: string | null }) | null;
    if (!v) continue;
    const value = v.iso && v.iso !== v.value ? `${v.value} (${v.iso})` : v.value;
    out.push(`| ${label} | ${cell(value)} | ${cell(from(v.provenance))} |`);
  }
  if (r.addresses.length) {
    out.push("", "## Addresses", "");
    for (const a of r.addresses) out.push(`- ${a.kind}: ${a.text} _(${from(a.provenance)})_`);
  }
  if (r.officers.length) {
    out.push("", "## Officers", "", "| Name | Role | Appointed | Resigned | Found by |", "|---|---|---|---|---|");
    for (const o of r.officers) out.push(`| ${cell(o.name)} | ${cell(o.role ?? "")} | ${cell(o.appointed_on ?? "")} | ${cell(o.resigned_on ?? "")} | ${cell(from(o.provenance))} |`);
  }
  return `${out.join("\n")}\n`;
}

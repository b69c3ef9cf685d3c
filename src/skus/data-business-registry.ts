import { z } from "zod";
import type { SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { extractRecord, registryFieldsOf } from "../registry-records/record.js";
import { recordMarkdown } from "../registry-records/record-markdown.js";
import { ADDRESS_KINDS, METHODS } from "../registry-records/record-types.js";
import { CONTENT_TRAP_RULES, scanContent } from "../trust/content-scan.js";
import { fetchPage } from "../web/page-fetch.js";
import { scanPage } from "../web/page-scan.js";
import { singleTargetInput, targetOf, type SingleTargetInput } from "../web/single-target.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// data.business-registry: the company record on one buyer-supplied registry page (a registry's
// company page, an OpenCorporates-style record, a bare JSON-LD document): name, registration number,
// status, incorporation date, type, jurisdiction, addresses and officers, read from schema.org JSON-LD,
// label/value tables and definition lists, officer tables, and text patterns, each value naming the
// method and the place it came from (registry-records/record.ts). A page that trips the content-trap
// scan is refused as `content_trap`; a page with no registry fields is refused as `no_registry_record`
// (both 409, not charged); a page that cannot be fetched fails the call (503, not charged).

const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

const Provenance = z.object({ method: z.enum(METHODS), where: z.string() });
const Field = z.object({ value: z.string(), provenance: Provenance, alternatives: z.array(z.object({ value: z.string(), provenance: Provenance })) });
const DateField = Field.extend({ iso: z.string().nullable().describe("ISO 8601 date when the printed date is unambiguous") });

export const BusinessRegistryOutput = z.object({
  url: z.string(),
  final_url: z.string(),
  company_name: Field.nullable(),
  registration_number: Field.nullable(),
  status: Field.nullable(),
  incorporation_date: DateField.nullable(),
  dissolution_date: DateField.nullable(),
  company_type: Field.nullable(),
  jurisdiction: Field.nullable(),
  addresses: z.array(
    z.object({
      kind: z.enum(ADDRESS_KINDS),
      text: z.string(),
      street: z.string().nullable(),
      locality: z.string().nullable(),
      region: z.string().nullable(),
      postal_code: z.string().nullable(),
      country: z.string().nullable(),
      provenance: Provenance,
    }),
  ),
  officers: z.array(
    z.object({
      name: z.string(),
      role: z.string().nullable(),
      appointed_on: z.string().nullable(),
      appointed_on_iso: z.string().nullable(),
      resigned_on: z.string().nullable(),
      resigned_on_iso: z.string().nullable(),
      provenance: Provenance,
    }),
  ),
  fields_found: z.array(z.string()),
  methods_used: z.array(z.enum(METHODS)),
  content_markdown: z.string(),
  source: z.object({ url: z.string(), final_url: z.string(), status_code: z.number().int(), content_type: z.string().nullable(), redirects: z.number().int(), fetched_at: z.string() }),
  content_scan: z.object({ rules_checked: z.number().int(), matched_rules: z.array(z.string()) }),
});

export function dataBusinessRegistry(policy: SafeFetchPolicy): SkuHandler<SingleTargetInput> {
  return {
    skuId: "data.business-registry",
    poweredBy: "svc-registry-records/json-ld+tables+text",
    input: singleTargetInput(policy, "the registry record's http(s) URL is required (url, urls or in task)"),
    output: BusinessRegistryOutput,
    upstreams: (v) => [new URL(targetOf(v)!).origin],
    async run(v, ctx) {
      const target = targetOf(v)!;
      const page = await fetchPage(target, policy, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_PAGE_BYTES, userAgent: "svc-business-registry/1.0", accept: /json/i });
      const json = /json/i.test(page.contentType ?? "") && !/html/i.test(page.contentType ?? "");
      const matched = json ? scanContent(page.body) : scanPage(page.body);
      if (matched.length) throw new SkuRefusal("content_trap", `${target} trips the content-trap scan (rules: ${matched.join(", ")})`);
      const record = extractRecord(page.body, json);
      const fields = registryFieldsOf(record);
      if (!fields.length) {
        throw new SkuRefusal("no_registry_record", `${target} has no registry fields (no schema.org Organization JSON-LD, no label/value rows such as "Company number" or "Status", no officers, no registry text patterns)`);
      }
      const fetchedAt = page.fetchedAt.toISOString();
      return {
        url: target,
        final_url: page.finalUrl,
        ...record,
        fields_found: record.company_name ? ["company_name", ...fields] : fields,
        content_markdown: recordMarkdown(record, page.finalUrl, fetchedAt),
        source: { url: target, final_url: page.finalUrl, status_code: page.status, content_type: page.contentType, redirects: page.hops.length - 1, fetched_at: fetchedAt },
        content_scan: { rules_checked: CONTENT_TRAP_RULES.length, matched_rules: [] },
      };
    },
  };
}

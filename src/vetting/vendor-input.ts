import { createHash } from "node:crypto";
import { z } from "zod";

// What the buyer supplies about a vendor, and the numbered materials the assessment reasons over. The
// vendor's own details (free text or documents) are required: a bare name is refused before any charge,
// since nothing is fetched or researched to fill the gap.

export const MAX_DOCUMENTS = 10;
export const MAX_SUPPLIED_CHARS = 200_000;

const Text = (max: number) => z.string().trim().min(1).max(max);

export const VendorInput = z
  .object({
    vendor: z
      .object({
        name: Text(200),
        website: Text(500).optional(),
        jurisdiction: Text(200).optional(),
        industry: Text(200).optional(),
        description: Text(5000).optional(),
      })
      .loose(),
    details: Text(50_000).optional().describe("what the buyer knows about the vendor: questionnaire answers, financials, certifications, incidents, contract terms"),
    documents: z
      .array(z.object({ title: Text(200), content: Text(100_000) }).loose())
      .min(1)
      .max(MAX_DOCUMENTS)
      .optional()
      .describe("supplied documents (report excerpts, policies, contract clauses) as text"),
    engagement: Text(2000).optional().describe("what the buyer intends to buy from the vendor (weighs criticality)"),
  })
  .loose()
  .superRefine((v, ctx) => {
    if (v.details === undefined && v.documents === undefined) {
      ctx.addIssue({ code: "custom", path: ["details"], message: "give the vendor's details (details or documents): the assessment reasons only over what you supply and researches nothing" });
    }
    const total = (v.details?.length ?? 0) + (v.documents ?? []).reduce((s, d) => s + d.content.length, 0);
    if (total > MAX_SUPPLIED_CHARS) ctx.addIssue({ code: "custom", path: ["documents"], message: `at most ${MAX_SUPPLIED_CHARS} characters of details and documents together (${total} given)` });
  });
export type VendorInput = z.infer<typeof VendorInput>;

export interface Material {
  /** `vendor`, `details`, `engagement`, `document:1`... */
  source: string;
  title: string;
  text: string;
}

/** The vendor record's fields as text lines (loose extra fields too, when they are plain values). */
function vendorRecord(vendor: VendorInput["vendor"]): string {
  return Object.entries(vendor)
    .filter(([, v]) => ["string", "number", "boolean"].includes(typeof v))
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join("\n");
}

export function materialsOf(input: VendorInput): Material[] {
  return [
    { source: "vendor", title: "Vendor record", text: vendorRecord(input.vendor) },
    ...(input.details ? [{ source: "details", title: "Details supplied by the buyer", text: input.details }] : []),
    ...(input.documents ?? []).map((d, i) => ({ source: `document:${i + 1}`, title: d.title, text: d.content })),
    ...(input.engagement ? [{ source: "engagement", title: "The buyer's intended engagement", text: input.engagement }] : []),
  ];
}

export const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

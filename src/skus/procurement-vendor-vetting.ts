import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { LlmEngine } from "../llm/llm-engine.js";
import { aiDisclosure, AiDisclosureSchema } from "../panels/ai-disclosure.js";
import { canonicalJson } from "../platform/canonical-json.js";
import { newId } from "../platform/ids.js";
import { assess } from "../vetting/vendor-assessment.js";
import { materialsOf, sha256, VendorInput } from "../vetting/vendor-input.js";
import { LEVELS, SCORING_RULES, SEVERITIES } from "../vetting/risk-score.js";
import { CATEGORIES, CATEGORY_IDS, ModelAssessment, SCHEMA_NAME, vettingMessages } from "../vetting/vetting-prompt.js";
import type { SkuHandler } from "./sku-handler.js";

// procurement.vendor-vetting (async): a vendor risk assessment over the details the buyer supplies, and
// nothing else (no fetching, no research; the vendor's website is not visited). A language model reports
// findings per category with verbatim evidence; the service checks each quote against the supplied
// materials, counts only grounded findings, and computes the 0-10 risk score by a fixed formula
// (src/vetting/risk-score.ts). The report carries an AI-generation disclosure and its own content hash.

export const VETTING_FAMILY = "procurement";
export const VETTING_MAX_TOKENS = 6000;

export const SCOPE_STATEMENT =
  "This assessment reasons only over the materials supplied in this call (listed in scope.materials). Nothing was fetched, searched or looked up, the vendor's website included, and the statements in the materials were not independently verified.";
export const CONTENT_HASH_RULE = "SHA-256 (hex) of the RFC 8785 canonical JSON of this deliverable without its content_sha256 field";

const Severity = z.enum(SEVERITIES);
const CategoryId = z.enum(CATEGORY_IDS as [string, ...string[]]);

export const VendorVettingOutput = z.object({
  assessment_id: z.string(),
  vendor: z.object({ name: z.string() }).catchall(z.unknown()).describe("the vendor record as supplied"),
  engagement: z.string().nullable(),
  risk_score: z.number().min(0).max(10).describe("computed from the counted findings' severities (see scoring)"),
  risk_level: z.enum(LEVELS.map((l) => l.level) as [string, ...string[]]),
  categories: z.array(
    z.object({
      category: CategoryId,
      covers: z.string(),
      information: z.enum(["supplied", "none"]),
      score: z.number().min(0).max(10),
      summary: z.string(),
      findings: z.array(
        z.object({
          id: z.string(),
          severity: Severity,
          title: z.string(),
          detail: z.string(),
          basis: z.enum(["stated", "absent"]),
          evidence: z.string(),
          found_in: z.array(z.string()),
          grounded: z.boolean().nullable().describe("stated findings: whether the quoted evidence is in the supplied materials; null for absences"),
          counted: z.boolean().describe("ungrounded findings are reported but not counted in the score"),
          red_flag: z.boolean(),
        }),
      ),
    }),
  ),
  red_flags: z.array(z.object({ finding_id: z.string(), category: CategoryId, severity: Severity, title: z.string(), reason: z.string() })),
  ungrounded_findings: z.number().int(),
  summary: z.string(),
  scoring: z.object({
    severity_points: z.record(z.string(), z.number()),
    unassessed_category_points: z.number(),
    category_rule: z.string(),
    overall_rule: z.string(),
    levels: z.string(),
    counted: z.string(),
  }),
  scope: z.object({
    statement: z.string(),
    researched_externally: z.literal(false),
    materials: z.array(z.object({ source: z.string(), title: z.string(), chars: z.number().int(), sha256: z.string() })),
  }),
  model: z.string(),
  ai_disclosure: AiDisclosureSchema,
  assessed_at: z.string(),
  content_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  content_hash_rule: z.string(),
});

export function procurementVendorVetting(llm: LlmEngine): SkuHandler<VendorInput> {
  return {
    skuId: "procurement.vendor-vetting",
    poweredBy: `svc-vetting/llm-findings (${llm.modelFor(VETTING_FAMILY)})`,
    input: VendorInput,
    output: VendorVettingOutput,
    // An open breaker on the model provider refuses the call before any charge.
    upstreams: () => (llm.upstream ? [llm.upstream] : []),
    async run(input, ctx) {
      const materials = materialsOf(input);
      const answer = await llm.complete({
        family: VETTING_FAMILY,
        accountTo: ctx.paymentId,
        schemaName: SCHEMA_NAME,
        schema: ModelAssessment,
        messages: vettingMessages(input.vendor.name, materials),
        maxTokens: VETTING_MAX_TOKENS,
      });
      const a = assess(answer.value, materials);
      const report = {
        assessment_id: newId("vvt"),
        vendor: { ...input.vendor },
        engagement: input.engagement ?? null,
        risk_score: a.risk_score,
        risk_level: a.risk_level,
        categories: a.categories.map((c) => ({ category: c.category, covers: CATEGORIES[c.category], information: c.information, score: c.score, summary: c.summary, findings: c.findings })),
        red_flags: a.red_flags,
        ungrounded_findings: a.ungrounded_findings,
        summary: answer.value.summary,
        scoring: SCORING_RULES,
        scope: {
          statement: SCOPE_STATEMENT,
          researched_externally: false,
          materials: materials.map((m) => ({ source: m.source, title: m.title, chars: m.text.length, sha256: sha256(m.text) })),
        },
        model: answer.model,
        ai_disclosure: aiDisclosure(answer.model, "This vendor assessment (its findings and summaries; the score is computed from their severities)"),
        assessed_at: ctx.now.toISOString(),
        content_hash_rule: CONTENT_HASH_RULE,
      };
      return { ...report, content_sha256: sha256(canonicalJson(report)) } as unknown as JsonObject;
    },
  };
}

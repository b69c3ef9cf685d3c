import { z } from "zod";
import { checkTarget, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { BM25_B, BM25_K1 } from "../research/bm25.js";
import { composeBrief, DUPLICATE_JACCARD, MIN_CLAIM_TERMS } from "../research/brief.js";
import { briefMarkdown, llmBriefNote } from "../research/brief-markdown.js";
import { LLM_MAX_PASSAGES, LLM_PASSAGE_BUDGET, writeBrief } from "../research/llm-brief.js";
import { AiGenerationOut, aiGeneration } from "../llm/ai-disclosure.js";
import type { LlmEngine } from "../llm/llm-engine.js";
import { readSources } from "../research/source-reader.js";
import { SUPPORT_COVERAGE } from "../research/support.js";
import { terms } from "../research/terms.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// research.topic-deep-researcher (async): a research brief on `task` built only from the pages in
// `urls` (at most MAX_URLS; nothing else is fetched). Extractive engine: claims are source sentences
// ranked by BM25 against the task, each citing its passage by number; see research/brief.ts. A source
// that fails is listed and skipped; a source that trips the content-trap scan is excluded and listed
// with the matched rules. The job fails (and is refunded) when no source could be read, and is refused
// as `content_trap` when every readable source was excluded.
// With a language model configured (LLM_BASE_URL), the claims are written by the model from numbered
// passages and each is held to the same support check (research/llm-brief.ts): `engine` is `llm` and
// `ai_generation` names the model; otherwise the extractive engine runs.

export const MAX_URLS = 10;

const Input = z
  .object({
    task: z.string().trim().min(3).max(2000),
    urls: z.array(z.string().trim().max(2048)).min(1, "at least one source URL").max(MAX_URLS, `at most ${MAX_URLS} source URLs`),
    max_claims: z.number().int().min(1).max(20).default(8),
    /** Statements to check against the sources (each marked supported with citations, or unverified). */
    claims: z.array(z.string().trim().min(3).max(600)).max(10).optional(),
  })
  .loose();
type Input = z.infer<typeof Input>;

const SupportCheck = z.object({ supported: z.boolean(), verbatim: z.boolean(), coverage: z.number(), missing_numbers: z.array(z.string()) });

export const ResearchBriefOutput = z.object({
  task: z.string(),
  engine: z.enum(["extractive", "llm"]),
  content_markdown: z.string().describe("the brief in Markdown, claims with [n] citations"),
  questions: z.array(z.object({ index: z.number().int(), text: z.string(), terms: z.array(z.string()), covered: z.boolean() })),
  claims: z.array(
    z.object({
      id: z.number().int(),
      kind: z.enum(["extracted", "written", "checked", "gap"]).describe("extracted: a quoted source sentence; written: a claim the language model wrote, then checked"),
      question: z.number().int().nullable(),
      text: z.string(),
      status: z.enum(["supported", "unverified"]),
      citations: z.array(z.number().int()).describe("citation numbers; empty when unverified"),
      score: z.number().nullable(),
      support: SupportCheck.nullable(),
    }),
  ),
  citations: z.array(
    z.object({
      n: z.number().int(),
      source: z.number().int().describe("1-based position of the source in urls"),
      url: z.string(),
      title: z.string().nullable(),
      passage_index: z.number().int(),
      section: z.string().nullable(),
      char_start: z.number().int().describe("offset of the passage in the source's extracted text"),
      char_end: z.number().int(),
      text: z.string(),
    }),
  ),
  sources: z.array(
    z.object({
      n: z.number().int(),
      url: z.string(),
      status: z.enum(["used", "excluded", "failed"]),
      final_url: z.string().nullable(),
      title: z.string().nullable(),
      status_code: z.number().int().nullable(),
      redirects: z.number().int().nullable(),
      passages: z.number().int().nullable(),
      extracted_chars: z.number().int().nullable(),
      matched_rules: z.array(z.string()),
      error: z.string().nullable(),
      fetched_at: z.string(),
    }),
  ),
  summary: z.object({ claims: z.number().int(), supported: z.number().int(), unverified: z.number().int(), sources_used: z.number().int(), sources_failed: z.number().int(), sources_excluded: z.number().int() }),
  query_terms: z.array(z.string()),
  uncovered_terms: z.array(z.string()),
  method: z.object({
    ranking: z.string(),
    unit: z.string(),
    bm25_k1: z.number(),
    bm25_b: z.number(),
    min_claim_terms: z.number().int().nullable().describe("extractive engine only"),
    duplicate_jaccard: z.number().nullable().describe("extractive engine only"),
    passages_given: z.number().int().nullable().describe("llm engine: how many numbered passages the model saw"),
    support_rule: z.string(),
    content_trap: z.string(),
  }),
  ai_generation: AiGenerationOut.nullable().describe("set when a language model wrote the claims"),
});

export function researchTopicDeepResearcher(policy: SafeFetchPolicy, llm?: LlmEngine): SkuHandler<Input> {
  const input = Input.superRefine((v, ctx) => {
    if (!terms(v.task).length) ctx.addIssue({ code: "custom", path: ["task"], message: "the task names no searchable terms" });
    v.urls.forEach((u, i) => {
      try {
        checkTarget(u, policy);
      } catch (err) {
        ctx.addIssue({ code: "custom", path: ["urls", i], message: `${u}: ${(err as Error).message}` });
      }
    });
  });
  return {
    skuId: "research.topic-deep-researcher",
    poweredBy: llm ? `svc-research/llm (${llm.modelFor("research")})` : "svc-research/extractive-bm25",
    input,
    output: ResearchBriefOutput,
    upstreams: () => (llm?.upstream ? [llm.upstream] : []),
    async run(v, ctx) {
      const urls = [...new Set(v.urls)];
      const outcomes = await readSources(urls, policy);
      const used = outcomes.filter((o) => o.status === "used");
      const excluded = outcomes.filter((o) => o.status === "excluded");
      if (!used.length && excluded.length) {
        throw new SkuRefusal("content_trap", `every readable source tripped the content-trap scan: ${excluded.map((e) => `${e.url} (${e.matched_rules.join(", ")})`).join("; ")}`);
      }
      if (!used.length) throw new Error(`none of the ${urls.length} sources could be read: ${outcomes.map((o) => (o.status === "failed" ? o.error : o.url)).join("; ")}`);
      const sources = used.map((s) => ({ source: s.n, url: s.final_url, title: s.title, content: s.content }));
      const written = llm ? await writeBrief(llm, v.task, sources, { maxClaims: v.max_claims, checkClaims: v.claims, accountTo: ctx.paymentId }) : undefined;
      const brief = written?.brief ?? composeBrief(v.task, sources, { maxClaims: v.max_claims, checkClaims: v.claims });
      const supported = brief.claims.filter((c) => c.status === "supported").length;
      return {
        task: v.task,
        engine: written ? "llm" : "extractive",
        content_markdown: briefMarkdown(v.task, brief, outcomes, ...(written ? [llmBriefNote(written.model)] : [])),
        questions: brief.questions.map((q) => ({ ...q })),
        claims: brief.claims.map((c) => ({ ...c, citations: [...c.citations], support: c.support && { ...c.support } })),
        citations: brief.citations.map((c) => ({ ...c })),
        sources: outcomes.map((o) => ({
          n: o.n,
          url: o.url,
          status: o.status,
          final_url: o.status === "failed" ? null : o.final_url,
          title: o.status === "used" ? o.title : null,
          status_code: o.status === "failed" ? null : o.status_code,
          redirects: o.status === "used" ? o.redirects : null,
          passages: o.status === "used" ? o.content.passages.length : null,
          extracted_chars: o.status === "used" ? o.content.text.length : null,
          matched_rules: o.status === "excluded" ? o.matched_rules : [],
          error: o.status === "failed" ? o.error : null,
          fetched_at: o.fetched_at,
        })),
        summary: { claims: brief.claims.length, supported, unverified: brief.claims.length - supported, sources_used: used.length, sources_failed: outcomes.filter((o) => o.status === "failed").length, sources_excluded: excluded.length },
        query_terms: brief.query_terms,
        uncovered_terms: brief.uncovered_terms,
        method: {
          ranking: written
            ? `Okapi BM25 of every passage against each question of the task; each question's best passages in turn (at most ${LLM_MAX_PASSAGES}, ${LLM_PASSAGE_BUDGET} characters) are numbered for the model, which writes claims citing them`
            : "Okapi BM25 of every source sentence against each question of the task",
          unit: written ? "claim written by the model (claims) citing passages (citations)" : "sentence (claims) within passage (citations)",
          bm25_k1: BM25_K1,
          bm25_b: BM25_B,
          min_claim_terms: written ? null : MIN_CLAIM_TERMS,
          duplicate_jaccard: written ? null : DUPLICATE_JACCARD,
          passages_given: written ? written.passagesGiven : null,
          support_rule: `verbatim in the cited passage, or at least ${SUPPORT_COVERAGE * 100}% of the claim's terms and all of its numbers in it${written ? "; a written claim cites only the passages it names that pass this check, and is unverified when none does" : ""}`,
          content_trap: "a source whose page trips the content-trap scan is excluded and listed with the matched rules",
        },
        ai_generation: written?.asked ? aiGeneration("Claims written by a language model from the fetched passages, each checked against the passages it cites.", written) : null,
      };
    },
  };
}

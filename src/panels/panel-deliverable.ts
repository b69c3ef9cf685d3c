import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import type { LlmEngine } from "../llm/llm-engine.js";
import { newId } from "../platform/ids.js";
import { aiDisclosure, AiDisclosureSchema } from "./ai-disclosure.js";
import { deliberate, TRANSCRIPT_HASH_RULE } from "./deliberation.js";
import { RESERVED_OPTIONS } from "./panel-prompts.js";
import { composePanel, DEFAULT_PANEL, MAX_PANEL, MIN_PANEL, ROLE_IDS, type RoleId } from "./roles.js";
import { TIE_BREAK_RULES } from "./tally.js";

// What both panel SKUs take and give: the buyer's question (or task), options (yes/no by default), an
// optional context, the panel's size or roles and the number of rebuttal rounds; the verdict, the vote
// breakdown with its tie-break, each panelist's first opinion, final position and vote, and the whole
// transcript with its SHA-256.

export const DEFAULT_OPTIONS = ["yes", "no"];
export const MAX_OPTIONS = 8;
export const DEFAULT_ROUNDS = 2;
export const MAX_ROUNDS = 3;

export const PanelInput = z
  .object({
    question: z.string().trim().min(3).max(4000).optional(),
    task: z.string().trim().min(3).max(4000).optional().describe("accepted for `question`"),
    options: z.array(z.string().trim().min(1).max(200)).min(2).max(MAX_OPTIONS).optional().describe(`the choices to decide between (default ${DEFAULT_OPTIONS.join("/")})`),
    context: z.string().trim().min(1).max(20_000).optional().describe("facts and constraints the panel reasons from"),
    panel_size: z.number().int().min(MIN_PANEL).max(MAX_PANEL).optional().describe(`${MIN_PANEL} to ${MAX_PANEL} panelists (default ${DEFAULT_PANEL})`),
    roles: z.array(z.enum(ROLE_IDS)).min(MIN_PANEL).max(MAX_PANEL).optional().describe("the panel's roles, in seat order, instead of the default order"),
    rounds: z.number().int().min(1).max(MAX_ROUNDS).default(DEFAULT_ROUNDS).describe(`rebuttal rounds (default ${DEFAULT_ROUNDS})`),
  })
  .loose()
  .superRefine((v, ctx) => {
    if (v.question === undefined && v.task === undefined) ctx.addIssue({ code: "custom", path: ["question"], message: "give the question to deliberate (question or task)" });
    const lower = (v.options ?? []).map((o) => o.toLowerCase());
    if (new Set(lower).size !== lower.length) ctx.addIssue({ code: "custom", path: ["options"], message: "options must be distinct (case-insensitive)" });
    const reserved = lower.find((o) => RESERVED_OPTIONS.includes(o));
    if (reserved) ctx.addIssue({ code: "custom", path: ["options"], message: `"${reserved}" is reserved (panelists use it to withhold a position)` });
    if (v.roles && new Set(v.roles).size !== v.roles.length) ctx.addIssue({ code: "custom", path: ["roles"], message: "roles must be distinct" });
    if (v.roles && v.panel_size !== undefined && v.panel_size !== v.roles.length) ctx.addIssue({ code: "custom", path: ["panel_size"], message: `panel_size ${v.panel_size} differs from the ${v.roles.length} roles given` });
  });
export type PanelInput = z.infer<typeof PanelInput>;

const Option = z.string();
const Confidence = z.number().min(0).max(1);

export const TranscriptEntrySchema = z.object({
  seq: z.number().int(),
  phase: z.enum(["opinion", "rebuttal", "vote"]),
  round: z.number().int().nullable(),
  panelist: z.string(),
  role: z.string(),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })),
  answer: z.record(z.string(), z.unknown()),
  model: z.string(),
  repaired: z.boolean(),
});

export const PanelOutput = z.object({
  deliberation_id: z.string(),
  question: z.string(),
  options: z.array(Option),
  options_defaulted: z.boolean().describe("true when no options were given and the panel decided yes/no"),
  context_supplied: z.boolean(),
  verdict: Option,
  decided_by: z.enum(["plurality", "summed_confidence", "chair", "buyer_order"]),
  forced: z.boolean().describe("true when a tie-break rule beyond plurality decided the verdict"),
  vote_breakdown: z.object({
    counts: z.array(z.object({ option: Option, votes: z.number().int(), summed_confidence: z.number(), voters: z.array(z.string()) })),
    abstentions: z.number().int(),
    abstained_by: z.array(z.string()),
    all_abstained: z.boolean(),
    tie: z.boolean(),
    tied_options: z.array(Option),
    tie_break: z.array(z.object({ rule: z.enum(["summed_confidence", "chair", "buyer_order"]), remaining: z.array(Option), note: z.string() })),
    absolute_majority: z.boolean(),
  }),
  tie_break_rules: z.array(z.string()),
  panel_size: z.number().int(),
  rounds: z.number().int().describe("rebuttal rounds held"),
  panel: z.array(
    z.object({
      panelist: z.string(),
      role: z.string(),
      role_title: z.string(),
      perspective: z.string(),
      first_opinion: z.object({ position: z.string(), summary: z.string(), arguments: z.array(z.string()), confidence: Confidence }),
      final_position: z.object({ position: z.string(), statement: z.string(), confidence: Confidence, changed_from_first: z.boolean() }),
      vote: z.object({ choice: Option.nullable().describe("null: abstained"), confidence: Confidence, rationale: z.string() }),
    }),
  ),
  process: z.object({
    phases: z.array(z.string()),
    completions: z.number().int(),
    repaired_answers: z.number().int(),
    independence: z.string(),
  }),
  model: z.string().describe("the model configured for this SKU family"),
  models_answered: z.array(z.string()),
  ai_disclosure: AiDisclosureSchema,
  transcript: z.array(TranscriptEntrySchema),
  transcript_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  transcript_hash_rule: z.string(),
  deliberated_at: z.string(),
});
export type PanelDeliverable = z.infer<typeof PanelOutput>;

export interface PanelRun {
  llm: LlmEngine;
  family: string;
  /** `a question` / `a procurement decision`: how the panelists are told what they deliberate. */
  setting: string;
  roleOrder: readonly RoleId[];
  idPrefix: string;
}

/** Runs the deliberation and writes the deliverable (nothing is stored). */
export async function runPanel(run: PanelRun, input: PanelInput, accountTo: string, now: Date): Promise<PanelDeliverable & JsonObject> {
  const question = (input.question ?? input.task)!;
  const options = input.options ?? DEFAULT_OPTIONS;
  const panel = composePanel(run.roleOrder, input.roles?.length ?? input.panel_size ?? DEFAULT_PANEL, input.roles);
  const d = await deliberate({
    llm: run.llm,
    family: run.family,
    accountTo,
    panel,
    brief: { question, options, context: input.context, setting: run.setting, panelSize: panel.length, rounds: input.rounds },
  });
  const t = d.tally;
  const model = run.llm.modelFor(run.family);
  const deliverable: PanelDeliverable = {
    deliberation_id: newId(run.idPrefix),
    question,
    options: [...options],
    options_defaulted: input.options === undefined,
    context_supplied: input.context !== undefined,
    verdict: t.verdict,
    decided_by: t.decided_by,
    forced: t.decided_by !== "plurality",
    vote_breakdown: {
      counts: t.counts,
      abstentions: t.abstentions,
      abstained_by: t.abstained_by,
      all_abstained: t.all_abstained,
      tie: t.tie,
      tied_options: t.tied_options,
      tie_break: t.tie_break,
      absolute_majority: t.absolute_majority,
    },
    tie_break_rules: [...TIE_BREAK_RULES],
    panel_size: panel.length,
    rounds: input.rounds,
    panel: d.records.map((r) => {
      const last = r.rebuttals.at(-1);
      const final = last ? { position: last.position, statement: last.rebuttal, confidence: last.confidence } : { position: r.opinion.position, statement: r.opinion.summary, confidence: r.opinion.confidence };
      return {
        panelist: r.panelist.id,
        role: r.panelist.role.id,
        role_title: r.panelist.role.title,
        perspective: r.panelist.role.perspective,
        first_opinion: { position: r.opinion.position, summary: r.opinion.summary, arguments: r.opinion.arguments, confidence: r.opinion.confidence },
        final_position: { ...final, changed_from_first: final.position !== r.opinion.position },
        vote: { choice: t.abstained_by.includes(r.panelist.id) ? null : r.vote.vote, confidence: r.vote.confidence, rationale: r.vote.rationale },
      };
    }),
    process: {
      phases: ["independent first opinions", ...Array.from({ length: input.rounds }, (_, i) => `rebuttal round ${i + 1}`), "vote"],
      completions: d.completions,
      repaired_answers: d.repaired,
      independence: "each first opinion is a separate completion whose prompt holds only the question, the options and the buyer's context: no panelist sees another's view before the rebuttal rounds",
    },
    model,
    models_answered: d.models,
    ai_disclosure: aiDisclosure(d.models.join(", ") || model, "This deliberation (every panelist's opinion, rebuttal and vote)"),
    transcript: d.transcript,
    transcript_sha256: d.transcriptSha256,
    transcript_hash_rule: TRANSCRIPT_HASH_RULE,
    deliberated_at: now.toISOString(),
  };
  return deliverable as PanelDeliverable & JsonObject;
}

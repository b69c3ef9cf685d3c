import { createHash } from "node:crypto";
import type { z } from "zod";
import type { LlmEngine, LlmMessage } from "../llm/llm-engine.js";
import { canonicalJson } from "../platform/canonical-json.js";
import {
  ABSTAIN,
  opinionMessages,
  opinionSchema,
  rebuttalMessages,
  rebuttalSchema,
  SCHEMA_NAMES,
  voteMessages,
  voteSchema,
  type Brief,
  type Opinion,
  type Rebuttal,
  type StatedPosition,
  type Vote,
} from "./panel-prompts.js";
import type { Panelist } from "./roles.js";
import { tallyVotes, type Tally } from "./tally.js";

// One deliberation: independent first opinions (each panelist a separate completion that sees only the
// question), `rounds` rebuttal rounds (each panelist sees the others' positions after the previous phase),
// then a structured vote and the forced decision of tally.ts. Completions = panelists x (1 + rounds + 1).
// Every completion (the messages sent and the validated answer) is a transcript entry; the transcript's
// SHA-256 over its RFC 8785 canonical JSON identifies the deliberation.

export type Phase = "opinion" | "rebuttal" | "vote";

export interface TranscriptEntry {
  seq: number;
  phase: Phase;
  /** Rebuttal round (1-based); null for the first opinions and the vote. */
  round: number | null;
  panelist: string;
  role: string;
  messages: LlmMessage[];
  answer: Record<string, unknown>;
  model: string;
  repaired: boolean;
}

export interface PanelistRecord {
  panelist: Panelist;
  opinion: Opinion;
  rebuttals: Rebuttal[];
  vote: Vote;
}

export interface Deliberation {
  records: PanelistRecord[];
  tally: Tally;
  transcript: TranscriptEntry[];
  transcriptSha256: string;
  completions: number;
  repaired: number;
  models: string[];
}

export const TRANSCRIPT_HASH_RULE = "SHA-256 (hex) of the RFC 8785 canonical JSON of `transcript` (every completion in order: the messages sent and the validated answer)";

export function transcriptSha256(transcript: readonly TranscriptEntry[]): string {
  return createHash("sha256").update(canonicalJson(transcript), "utf8").digest("hex");
}

export interface DeliberationRequest {
  llm: LlmEngine;
  family: string;
  accountTo: string;
  brief: Brief;
  panel: Panelist[];
}

export async function deliberate(req: DeliberationRequest): Promise<Deliberation> {
  const { llm, family, accountTo, brief, panel } = req;
  const transcript: TranscriptEntry[] = [];
  const ask = async <T>(phase: Phase, round: number | null, p: Panelist, schema: z.ZodType<T>, messages: LlmMessage[]) => {
    const schemaName = SCHEMA_NAMES[phase];
    const a = await llm.complete({ family, accountTo, schemaName, schema, messages });
    return { value: a.value, entry: { phase, round, panelist: p.id, role: p.role.id, messages, answer: a.value as Record<string, unknown>, model: a.model, repaired: a.repaired } };
  };
  // A phase asks every panelist at once (the engine bounds concurrency); the transcript keeps seat order.
  const phase = async <T>(run: (p: Panelist) => Promise<{ value: T; entry: Omit<TranscriptEntry, "seq"> }>): Promise<T[]> => {
    const answers = await Promise.all(panel.map(run));
    for (const a of answers) transcript.push({ seq: transcript.length + 1, ...a.entry });
    return answers.map((a) => a.value);
  };

  const opinions = await phase((p) => ask("opinion", null, p, opinionSchema(brief.options), opinionMessages(p, brief)));
  let positions: StatedPosition[] = panel.map((p, i) => ({ panelist: p, position: opinions[i]!.position, confidence: opinions[i]!.confidence, statement: opinionStatement(opinions[i]!) }));
  const rebuttals: Rebuttal[][] = panel.map(() => []);
  for (let round = 1; round <= brief.rounds; round++) {
    const previous = positions;
    const answers = await phase((p) => {
      const i = panel.indexOf(p);
      return ask("rebuttal", round, p, rebuttalSchema(brief.options), rebuttalMessages(p, brief, round, previous[i]!, previous.filter((_, j) => j !== i)));
    });
    answers.forEach((a, i) => rebuttals[i]!.push(a));
    positions = panel.map((p, i) => ({ panelist: p, position: answers[i]!.position, confidence: answers[i]!.confidence, statement: answers[i]!.rebuttal }));
  }
  const finals = positions;
  const votes = await phase((p) => ask("vote", null, p, voteSchema(brief.options), voteMessages(p, brief, finals)));
  const tally = tallyVotes(
    brief.options,
    votes.map((v, i) => ({ panelist: panel[i]!.id, role: panel[i]!.role.id, choice: v.vote === ABSTAIN ? null : v.vote, confidence: v.confidence })),
  );
  return {
    records: panel.map((p, i) => ({ panelist: p, opinion: opinions[i]!, rebuttals: rebuttals[i]!, vote: votes[i]! })),
    tally,
    transcript,
    transcriptSha256: transcriptSha256(transcript),
    completions: transcript.length,
    repaired: transcript.filter((t) => t.repaired).length,
    models: [...new Set(transcript.map((t) => t.model))],
  };
}

function opinionStatement(o: Opinion): string {
  return [o.summary, ...o.arguments.map((a) => `- ${a}`)].join("\n");
}

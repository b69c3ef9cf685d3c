import { createHash } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import type { LlmEngine } from "../llm/llm-engine.js";
import { PanelInput, PanelOutput, runPanel, type PanelDeliverable } from "../panels/panel-deliverable.js";
import { COUNCIL_ROLE_ORDER } from "../panels/roles.js";
import { canonicalJson } from "../platform/canonical-json.js";
import { PROOF_KIND, prepareProof, recordProof, signatureDisclosure, type ProofInput } from "../proof/proof-recorder.js";
import type { SkuContext, SkuHandler } from "./sku-handler.js";

// procurement.council (async): the deliberation panel (src/panels/) on a buying decision, with the
// "on-chain identity proof of deliberation": a record on the proof rail (kind 30110, task class
// `deliberation`) naming the panel's seats, roles and models, the vote counts, the verdict's position
// and the transcript's SHA-256, signed and Merkle-anchored with the rail (`svc verify <proof_id>`).
// The public record carries hashes of the buyer's question and options, never their text. `run`
// prepares the record; `commit` writes it with the delivered job.

export const COUNCIL_FAMILY = "procurement";
export const COUNCIL_TASK_CLASS = "deliberation";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

const ProofBody = z.object({
  deliberation_id: z.string(),
  sku_id: z.literal("procurement.council"),
  question_sha256: z.string(),
  options_sha256: z.string().describe("SHA-256 of the RFC 8785 canonical JSON of `options`"),
  verdict_index: z.number().int().describe("1-based position of the verdict in `options`"),
  decided_by: z.string(),
  votes: z.array(z.number().int()).describe("votes per option, in the order of `options`"),
  abstentions: z.number().int(),
  panel: z.array(z.object({ panelist: z.string(), role: z.string() })),
  rounds: z.number().int(),
  models: z.array(z.string()),
  transcript_sha256: z.string(),
  payer: z.string(),
  payment_id: z.string(),
  deliberated_at: z.string(),
});

export const CouncilOutput = PanelOutput.extend({
  proof_id: z.string().describe("the deliberation's record on the proof rail (kind 30110): `svc verify <proof_id>`"),
  proof_url: z.string(),
  proof_record: z.object({
    kind: z.literal(PROOF_KIND.audit),
    task_class: z.literal(COUNCIL_TASK_CLASS),
    settlement_ref: z.string(),
    ts: z.string(),
    record_sha256: z.string(),
    ed25519_signature: z.string(),
    body: ProofBody,
    verify: z.string(),
    anchoring: z.string(),
    signature_disclosure: z.string(),
  }),
});

function proofBody(d: PanelDeliverable, payer: string, paymentId: string): z.infer<typeof ProofBody> {
  return {
    deliberation_id: d.deliberation_id,
    sku_id: "procurement.council",
    question_sha256: sha256(d.question),
    options_sha256: sha256(canonicalJson(d.options)),
    verdict_index: d.options.indexOf(d.verdict) + 1,
    decided_by: d.decided_by,
    votes: d.vote_breakdown.counts.map((c) => c.votes),
    abstentions: d.vote_breakdown.abstentions,
    panel: d.panel.map((p) => ({ panelist: p.panelist, role: p.role })),
    rounds: d.rounds,
    models: d.models_answered,
    transcript_sha256: d.transcript_sha256,
    payer,
    payment_id: paymentId,
    deliberated_at: d.deliberated_at,
  };
}

const proofInput = (ref: string, ts: string, body: JsonObject): ProofInput => ({ kind: PROOF_KIND.audit, settlementRef: ref, taskClass: COUNCIL_TASK_CLASS, ts: new Date(ts), body });

/** Records the deliberation on the rail under the proof id and time the deliverable shows. */
async function commitCouncil(manager: EntityManager, deliverable: JsonObject, ctx: SkuContext): Promise<void> {
  const d = CouncilOutput.parse(deliverable);
  await recordProof(manager, ctx.proofKey, proofInput(d.proof_record.settlement_ref, d.proof_record.ts, d.proof_record.body as JsonObject), d.proof_id);
}

export function procurementCouncil(llm: LlmEngine): SkuHandler<PanelInput> {
  return {
    skuId: "procurement.council",
    poweredBy: `svc-panels/council (${llm.modelFor(COUNCIL_FAMILY)})`,
    input: PanelInput,
    output: CouncilOutput,
    // An open breaker on the model provider refuses the call before any charge.
    upstreams: () => (llm.upstream ? [llm.upstream] : []),
    async run(input, ctx) {
      const d = await runPanel({ llm, family: COUNCIL_FAMILY, setting: "a procurement decision", roleOrder: COUNCIL_ROLE_ORDER, idPrefix: "cnl" }, input, ctx.paymentId, ctx.now);
      const body = proofBody(d, ctx.payer, ctx.paymentId) as JsonObject;
      const record = prepareProof(ctx.proofKey, proofInput(d.deliberation_id, d.deliberated_at, body));
      return {
        ...d,
        proof_id: record.proofId,
        proof_url: `/v1/proofs/${record.proofId}`,
        proof_record: {
          kind: PROOF_KIND.audit,
          task_class: COUNCIL_TASK_CLASS,
          settlement_ref: d.deliberation_id,
          ts: record.ts.toISOString(),
          record_sha256: record.recordSha256,
          ed25519_signature: record.ed25519Signature ?? "",
          body,
          verify: `svc verify ${record.proofId}`,
          anchoring: "the record joins the next Merkle batch of the proof rail; once anchored, svc verify also checks its inclusion and the anchor transaction",
          signature_disclosure: signatureDisclosure(ctx.proofKey),
        },
      } as JsonObject;
    },
    // The record reaches the rail only with the delivered job (a refunded job leaves none).
    commit: commitCouncil,
  };
}

import { createHash, createHmac } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import { canonicalJson } from "../platform/canonical-json.js";
import { newId } from "../platform/ids.js";
import { insertRows } from "../platform/db/raw-insert.js";
import { PROOF_KIND, recordProof, signatureDisclosure, type ProofInput } from "../proof/proof-recorder.js";
import { SealEntity } from "./seal.entity.js";
import type { SkuContext, SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// attestation.single-use-seal: seals that content (by its SHA-256) was produced by an agent at a time.
// The seal is HMAC-signed, recorded on the proof rail (kind 30110, task class `attestation`, verifiable
// with `svc verify <proof_id>`), and verifies once as unused at POST /v1/seals/{seal_id}/verify; every
// later verification reports its use. `run` only computes; the seal row and its proof record are written
// by `commit`, with the settlement, so a seal whose payment never settles does not exist.

export const SEAL_TASK_CLASS = "attestation";
export const SEAL_ID = /^seal_[0-9a-z]{20}$/;

const Input = z
  .object({
    producer: z.string().trim().min(1).max(128),
    content: z.string().max(1_000_000).optional(),
    content_sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters").optional(),
    produced_at: z.iso.datetime({ offset: true }).optional(),
  })
  .loose()
  .refine((i) => (i.content === undefined) !== (i.content_sha256 === undefined), { message: "give exactly one of content or content_sha256" });
type Input = z.infer<typeof Input>;

const Output = z.object({
  seal_id: z.string(),
  content_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  producer: z.string(),
  produced_at: Iso,
  sealed_at: Iso,
  payer: z.string(),
  state: z.literal("unused"),
  signature: z.string(),
  signature_alg: z.string(),
  signature_disclosure: z.string(),
  proof_id: z.string().describe("the seal's record on the proof rail (kind 30110): `svc verify <proof_id>`"),
  proof_url: z.string(),
  verify_url: z.string().describe("POST here with content or content_sha256: the first matching verification uses the seal"),
});

/** The proof-rail record of a seal: its claim and the payment that bought it (public fields only). */
function sealProof(d: { seal_id: string; content_sha256: string; producer: string; produced_at: string; sealed_at: string; payer: string }, paymentId: string): ProofInput {
  return {
    kind: PROOF_KIND.audit,
    settlementRef: d.seal_id,
    taskClass: SEAL_TASK_CLASS,
    ts: new Date(d.sealed_at),
    body: { seal_id: d.seal_id, content_sha256: d.content_sha256, producer: d.producer, produced_at: d.produced_at, sealed_at: d.sealed_at, payer: d.payer, payment_id: paymentId },
  };
}

/** Writes the seal row and its proof record from the deliverable (in the settlement's transaction). */
async function commitSeal(manager: EntityManager, deliverable: JsonObject, ctx: SkuContext): Promise<void> {
  const d = Output.parse(deliverable);
  // A raw insert: on the paid path the query builder's CPU is most of the write.
  await insertRows(manager.connection, SealEntity, [{
    sealId: d.seal_id,
    contentSha256: d.content_sha256,
    producer: d.producer,
    producedAt: new Date(d.produced_at),
    payer: d.payer,
    signature: d.signature,
    sealedAt: new Date(d.sealed_at),
    usedAt: null,
  }], manager);
  // fresh: the seal row just inserted has a new primary key, so its record cannot exist yet.
  await recordProof(manager, ctx.proofKey, sealProof(d, ctx.paymentId), d.proof_id, { fresh: true });
}

export function attestationSingleUseSeal(): SkuHandler<Input> {
  return {
    skuId: "attestation.single-use-seal",
    poweredBy: "svc-attest/seal",
    input: Input,
    output: Output,
    async run(input, ctx) {
      const contentSha256 = input.content_sha256 ?? createHash("sha256").update(input.content!, "utf8").digest("hex");
      const producedAt = input.produced_at ? new Date(input.produced_at) : ctx.now;
      const sealId = newId("seal");
      const claim = { seal_id: sealId, content_sha256: contentSha256, producer: input.producer, produced_at: producedAt.toISOString(), sealed_at: ctx.now.toISOString(), payer: ctx.payer };
      const signature = createHmac("sha256", ctx.proofKey.hmacKey).update(canonicalJson(claim)).digest("hex");
      // The proof record is written by commit from this same claim; the deliverable shows its id already.
      const proofId = newId("prf");
      return {
        ...claim,
        state: "unused",
        signature,
        signature_alg: "HMAC-SHA256 over RFC 8785 canonical JSON of the claim",
        signature_disclosure: signatureDisclosure(ctx.proofKey),
        proof_id: proofId,
        proof_url: `/v1/proofs/${proofId}`,
        verify_url: `/v1/seals/${sealId}/verify`,
      };
    },
    commit: commitSeal,
  };
}

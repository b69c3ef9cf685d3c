import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { newId } from "../platform/ids.js";
import type { EntityManager } from "typeorm";
import { PROOF_KIND, prepareProof, recordProof, signatureDisclosure, type ProofKey } from "../proof/proof-recorder.js";
import type { SkuContext } from "../skus/sku-handler.js";

// Signed attestations on the proof rail (kind 30110, audit proofs; task class `security`). The statement
// is the record's body: canonical JSON, hashed, HMAC-checksummed and Ed25519-signed by the rail, then
// Merkle-anchored with the rest of the rail, so `svc verify <proof_id>` checks it like any proof. The
// record is prepared (id, hash, signatures) while the deliverable is computed and written by the engine's
// commit, with the settlement: an attestation whose payment never settles is not on the rail.

export const ATTESTATION_TASK_CLASS = "security";

export const AttestationProofSchema = z.object({
  proof_id: z.string(),
  kind: z.literal(PROOF_KIND.audit),
  settlement_ref: z.string(),
  task_class: z.string(),
  ts: z.string(),
  record_sha256: z.string(),
  ed25519_signature: z.string(),
  url: z.string(),
  verify: z.string(),
  anchoring: z.string(),
  signature_disclosure: z.string(),
});

/**
 * The statement and the `proof` block of the deliverable, signed but not yet recorded: the proof id is
 * drawn now so the deliverable can show it; `commitAttestation` records the same record.
 */
export function prepareAttestation(ctx: SkuContext, prefix: string, statement: (attestationId: string) => JsonObject) {
  const attestationId = newId(prefix);
  const body = statement(attestationId);
  const proof = prepareProof(ctx.proofKey, { kind: PROOF_KIND.audit, settlementRef: attestationId, taskClass: ATTESTATION_TASK_CLASS, ts: ctx.now, body });
  return {
    attestationId,
    body,
    proof: {
      proof_id: proof.proofId,
      kind: PROOF_KIND.audit,
      settlement_ref: attestationId,
      task_class: ATTESTATION_TASK_CLASS,
      ts: proof.ts.toISOString(),
      record_sha256: proof.recordSha256,
      ed25519_signature: proof.ed25519Signature ?? "",
      url: `/v1/proofs/${proof.proofId}`,
      verify: `svc verify ${proof.proofId}`,
      anchoring: "the record joins the next Merkle batch; once anchored, svc verify also checks its inclusion and the anchor transaction",
      signature_disclosure: signatureDisclosure(ctx.proofKey),
    },
  };
}

/** Records the deliverable's statement on the rail under the proof id and time the deliverable shows. */
export async function commitAttestation(manager: EntityManager, key: ProofKey, deliverable: JsonObject): Promise<void> {
  const proof = deliverable.proof as JsonObject;
  await recordProof(
    manager,
    key,
    { kind: PROOF_KIND.audit, settlementRef: String(deliverable.attestation_id), taskClass: String(proof.task_class), ts: new Date(String(proof.ts)), body: deliverable.statement as JsonObject },
    String(proof.proof_id),
  );
}

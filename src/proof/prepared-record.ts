import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { z } from "zod";
import { newId } from "../platform/ids.js";
import type { SkuContext } from "../skus/sku-handler.js";
import { prepareProof, recordProof, signatureDisclosure, type ProofKey } from "./proof-recorder.js";

// A signed record a deliverable shows before it is on the rail. `run` draws the record's id and proof id
// and signs the body (the record is canonical JSON, hashed, HMAC-checksummed, Ed25519-signed, then
// Merkle-anchored with the rest of the rail, so `svc verify <proof_id>` checks it like any proof); the
// deliverable carries the body and a `proof` block; the engine's `commit` records that same record with
// the delivery, so a job that is refunded leaves nothing on the rail.

/** Which record: its kind and task class, and the deliverable's fields holding its id and its body. */
export interface PreparedRecordKind {
  kind: number;
  taskClass: string;
  idField: string;
  bodyField: string;
}

/** The deliverable's `proof` block for records of `kind`. */
export const proofBlockSchema = <K extends number>(kind: K) =>
  z.object({
    proof_id: z.string(),
    kind: z.literal(kind),
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

/** A record id (drawn with `idPrefix`), its body `body(id)` and the proof block: signed, not yet recorded. */
export function prepareRecord(ctx: SkuContext, rec: PreparedRecordKind, idPrefix: string, body: (id: string) => JsonObject) {
  const id = newId(idPrefix);
  const recordBody = body(id);
  const proof = prepareProof(ctx.proofKey, { kind: rec.kind, settlementRef: id, taskClass: rec.taskClass, ts: ctx.now, body: recordBody });
  return {
    id,
    body: recordBody,
    proof: {
      proof_id: proof.proofId,
      kind: rec.kind,
      settlement_ref: id,
      task_class: rec.taskClass,
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

/** Records the deliverable's body under the proof id and time its proof block shows. */
export async function commitRecord(manager: EntityManager, key: ProofKey, rec: PreparedRecordKind, deliverable: JsonObject): Promise<void> {
  const proof = deliverable.proof as JsonObject;
  await recordProof(
    manager,
    key,
    { kind: rec.kind, settlementRef: String(deliverable[rec.idField]), taskClass: String(proof.task_class), ts: new Date(String(proof.ts)), body: deliverable[rec.bodyField] as JsonObject },
    String(proof.proof_id),
  );
}

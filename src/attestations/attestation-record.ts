import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import { commitRecord, prepareRecord, proofBlockSchema, type PreparedRecordKind } from "../proof/prepared-record.js";
import { PROOF_KIND, type ProofKey } from "../proof/proof-recorder.js";
import type { SkuContext } from "../skus/sku-handler.js";

// Signed attestations on the proof rail (kind 30110, audit proofs; task class `security`). The statement
// is the record's body: canonical JSON, hashed, HMAC-checksummed and Ed25519-signed by the rail, then
// Merkle-anchored with the rest of the rail, so `svc verify <proof_id>` checks it like any proof. The
// record is prepared (id, hash, signatures) while the deliverable is computed and written by the engine's
// commit, with the settlement: an attestation whose payment never settles is not on the rail.

export const ATTESTATION_TASK_CLASS = "security";

const ATTESTATION: PreparedRecordKind = { kind: PROOF_KIND.audit, taskClass: ATTESTATION_TASK_CLASS, idField: "attestation_id", bodyField: "statement" };

export const AttestationProofSchema = proofBlockSchema(PROOF_KIND.audit);

/**
 * The statement and the `proof` block of the deliverable, signed but not yet recorded: the proof id is
 * drawn now so the deliverable can show it; `commitAttestation` records the same record.
 */
export function prepareAttestation(ctx: SkuContext, prefix: string, statement: (attestationId: string) => JsonObject) {
  const { id, body, proof } = prepareRecord(ctx, ATTESTATION, prefix, statement);
  return { attestationId: id, body, proof };
}

/** Records the deliverable's statement on the rail under the proof id and time the deliverable shows. */
export const commitAttestation = (manager: EntityManager, key: ProofKey, deliverable: JsonObject): Promise<void> => commitRecord(manager, key, ATTESTATION, deliverable);

import { createHash, createHmac } from "node:crypto";
import { canonicalJson } from "../platform/canonical-json.js";
import type { EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { insertRows } from "../platform/db/raw-insert.js";
import { ProofRecordEntity } from "./proof-record.entity.js";
import type { ProofSigner } from "./proof-signer.js";

// Writes records on the public proof rail. Each record is canonical JSON (RFC 8785), hashed with
// SHA-256, checksummed with HMAC-SHA256 (the operator's key: nobody else can check it, and every record
// says so) and signed with Ed25519 (anyone can check it with the published public key).

export const PROOF_KIND = {
  enforcement: 30014,
  auditReport: 30105,
  delegation: 30106,
  audit: 30110,
  stateAnchor: 30119,
  settledOutcome: 30120,
  adjudicatedOutcome: 30129,
} as const;

export interface ProofKey {
  hmacKey: string;
  isDevelopmentKey: boolean;
  /** Ed25519 signer; its public key is published at GET /v1/proofs/keys. */
  signer: ProofSigner;
}

export function signatureDisclosure(key: ProofKey): string {
  return key.isDevelopmentKey
    ? "integrity_signature is an HMAC-SHA256 under a development key: a checksum, not a signature anyone can verify; the on-chain transaction (settlement_ref) is the anchor"
    : "integrity_signature is an HMAC-SHA256 under the operator's key: a checksum third parties cannot verify; the on-chain transaction (settlement_ref) is the anchor";
}

export interface ProofInput {
  kind: number;
  settlementRef: string | null;
  taskClass: string;
  ts: Date;
  /** Public fields only: never cost or net figures. */
  body: Record<string, unknown>;
}

export function canonicalRecord(p: ProofInput): string {
  return canonicalJson({ kind: p.kind, settlement_ref: p.settlementRef, task_class: p.taskClass, ts: p.ts.toISOString(), body: p.body });
}

/**
 * The record as it will be stored, signed and hashed, without writing it (its `sequence` is assigned on
 * insert). Engines that must show a proof in their deliverable prepare it in `run` and record the same
 * record in `commit`: the hash and both signatures are deterministic in the record's content.
 */
export function prepareProof(key: ProofKey, p: ProofInput, proofId = newId("prf")): ProofRecordEntity {
  const canonical = canonicalRecord(p);
  return Object.assign(new ProofRecordEntity(), {
    proofId,
    kind: p.kind,
    settlementRef: p.settlementRef,
    taskClass: p.taskClass,
    ts: p.ts,
    bodyJson: canonicalJson(p.body),
    recordSha256: createHash("sha256").update(canonical).digest("hex"),
    integritySignature: createHmac("sha256", key.hmacKey).update(canonical).digest("hex"),
    ed25519Signature: key.signer.sign(canonical),
  });
}

export interface RecordOptions {
  /**
   * The caller has just won the write that makes this record due (a guarded state update, a fresh
   * primary key) in the same transaction, so no record for it can exist: skip the read. The unique
   * (kind, settlement_ref) index still refuses a duplicate.
   */
  fresh?: boolean;
}

/**
 * Records a proof once per (kind, settlement_ref); returns the stored record. `proofId` is the id a
 * deliverable already shows (see prepareProof); a fresh one is drawn otherwise.
 */
export async function recordProof(manager: EntityManager, key: ProofKey, p: ProofInput, proofId?: string, opts: RecordOptions = {}): Promise<ProofRecordEntity> {
  if (p.settlementRef && !opts.fresh) {
    const existing = await manager.findOneBy(ProofRecordEntity, { kind: p.kind, settlementRef: p.settlementRef });
    if (existing) return existing;
  }
  const record = prepareProof(key, p, proofId);
  // A raw insert (not save, which opens an implicit transaction of its own; not the query builder, whose CPU is most of the write).
  const res = await insertRows(manager.connection, ProofRecordEntity, [record], manager);
  record.sequence = Number(res.insertId);
  return record;
}

/**
 * Records proofs the caller has just made due in the same transaction (each won a guarded update, so none can
 * exist yet; the unique (kind, settlement_ref) index still refuses a duplicate), all in one INSERT.
 */
export async function recordFreshProofs(manager: EntityManager, key: ProofKey, inputs: ProofInput[]): Promise<void> {
  await insertRows(manager.connection, ProofRecordEntity, inputs.map((p) => prepareProof(key, p)), manager);
}

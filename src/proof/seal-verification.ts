import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { IsNull, type DataSource } from "typeorm";
import { SealState, VerifySealResponseSchema, type VerifySealRequest, type VerifySealResponse } from "../../gen/svc/proof/v1/proof_service_pb.js";
import { canonicalJson } from "../platform/canonical-json.js";
import { errors, rpcError } from "../platform/rpc/errors.js";
import { SEAL_ID } from "../skus/attestation-single-use-seal.js";
import { SealEntity } from "../skus/seal.entity.js";
import { ProofRecordEntity } from "./proof-record.entity.js";
import { PROOF_KIND, type ProofKey } from "./proof-recorder.js";

// Verification of single-use seals (attestation.single-use-seal), free and public. The content given is
// hashed and compared with the sealed hash. The first matching verification uses the seal: one guarded
// update (`used_at IS NULL`) decides it, so of any number of concurrent verifications exactly one sees
// `unused`; every later one sees `used` and when. A mismatch reports the state and never uses the seal.

const MAX_CONTENT = 1_000_000;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The SHA-256 the request asks to check: given, or of the content given (exactly one of them). */
function requestedHash(req: VerifySealRequest): string {
  const given = [req.contentSha256 !== undefined && "content_sha256", req.content !== undefined && "content"].filter(Boolean);
  if (given.length !== 1) {
    throw errors.invalidArgument("invalid_input", "give exactly one of content or content_sha256 to check against the seal", [
      { field: "content_sha256", description: "give exactly one of content or content_sha256" },
    ]);
  }
  if (req.content !== undefined) {
    if (req.content.length > MAX_CONTENT) throw errors.invalidArgument("invalid_input", `content is longer than ${MAX_CONTENT} characters`, [{ field: "content", description: `at most ${MAX_CONTENT} characters` }]);
    return createHash("sha256").update(req.content, "utf8").digest("hex");
  }
  if (!HEX64.test(req.contentSha256!)) throw errors.invalidArgument("invalid_input", "content_sha256 must be 64 hex characters", [{ field: "content_sha256", description: "must be 64 hex characters" }]);
  return req.contentSha256!.toLowerCase();
}

/** The seal's HMAC over its claim, as the engine signed it: a row altered in the database fails it. */
function signatureHolds(seal: SealEntity, key: ProofKey): boolean {
  const claim = { seal_id: seal.sealId, content_sha256: seal.contentSha256, producer: seal.producer, produced_at: seal.producedAt.toISOString(), sealed_at: seal.sealedAt.toISOString(), payer: seal.payer };
  const expected = Buffer.from(createHmac("sha256", key.hmacKey).update(canonicalJson(claim)).digest("hex"));
  const stored = Buffer.from(seal.signature);
  return expected.length === stored.length && timingSafeEqual(expected, stored);
}

export async function verifySeal(ds: DataSource, key: ProofKey, req: VerifySealRequest, now = new Date()): Promise<VerifySealResponse> {
  const hash = requestedHash(req);
  const notFound = () => errors.notFound("seal_not_found", `no seal ${req.sealId}`);
  if (!SEAL_ID.test(req.sealId)) throw notFound();
  const seal = await ds.manager.findOneBy(SealEntity, { sealId: req.sealId });
  if (!seal) throw notFound();
  if (!signatureHolds(seal, key)) throw rpcError(Code.DataLoss, "seal_integrity_failed", `seal ${seal.sealId} does not match its signature; it cannot be verified`);

  const matches = hash === seal.contentSha256;
  let consumed = false;
  let usedAt = seal.usedAt;
  if (matches && usedAt === null) {
    const res = await ds.manager.update(SealEntity, { sealId: seal.sealId, usedAt: IsNull() }, { usedAt: now });
    consumed = (res.affected ?? 0) === 1;
    // Lost the race: another verification used it first; report that one's time.
    if (!consumed) usedAt = (await ds.manager.findOneByOrFail(SealEntity, { sealId: seal.sealId })).usedAt;
  }
  const proof = await ds.manager.findOne(ProofRecordEntity, { where: { kind: PROOF_KIND.audit, settlementRef: seal.sealId }, select: { proofId: true } });
  const used = !consumed && usedAt !== null;
  return create(VerifySealResponseSchema, {
    sealId: seal.sealId,
    matches,
    state: used ? SealState.USED : SealState.UNUSED,
    consumed,
    usedAt: used ? timestampFromDate(usedAt!) : undefined,
    verifiedAt: timestampFromDate(now),
    contentSha256: seal.contentSha256,
    producer: seal.producer,
    producedAt: timestampFromDate(seal.producedAt),
    sealedAt: timestampFromDate(seal.sealedAt),
    proofId: proof?.proofId ?? "",
    proofUrl: proof ? `/v1/proofs/${proof.proofId}` : "",
  });
}

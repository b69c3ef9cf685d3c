import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { In, LessThan, MoreThan, type DataSource } from "typeorm";
import type { GetProofRequest, GetSettlementProofRequest, ListSettlementProofsRequest, ProofService, StreamProofsRequest, VerifySealRequest } from "../../gen/svc/proof/v1/proof_service_pb.js";
import { errors } from "../platform/rpc/errors.js";
import { ProofRecordEntity } from "./proof-record.entity.js";
import { toProofRecordProto } from "./proof.mapper.js";
import { PROOF_KIND, type ProofKey } from "./proof-recorder.js";
import { inclusionOf, MERKLE_TREE } from "./proof-anchorer.js";
import { verifySeal } from "./seal-verification.js";

// The public proof rail: settlement proofs, newest first, paged by sequence; any record by id; the
// verification of single-use seals.

export const PROOF_PAGE_DEFAULT = 50;
export const PROOF_PAGE_MAX = 500;

/** Records per query of the stream; the stream polls for new records this often when following. */
const STREAM_BATCH = 1000;
const FOLLOW_POLL_MS = 250;

export const CANONICALIZATION =
  "RFC 8785 canonical JSON of {kind, settlement_ref, task_class, ts (RFC 3339, ms), body}; record_sha256 = SHA-256 of it; ed25519_signature = Ed25519 over its UTF-8 bytes";

export class ProofServiceImpl implements Partial<ServiceImpl<typeof ProofService>> {
  constructor(
    private readonly ds: DataSource,
    private readonly key: ProofKey,
    private readonly anchors: { address: string; network: string } | undefined,
  ) {}

  async listSettlementProofs(req: ListSettlementProofsRequest) {
    if (req.limit < 0) throw errors.invalidArgument("invalid_limit", "limit must be positive");
    const limit = Math.min(req.limit || PROOF_PAGE_DEFAULT, PROOF_PAGE_MAX);
    let before: number | undefined;
    if (req.pageToken) {
      before = Number(Buffer.from(req.pageToken, "base64url").toString());
      if (!Number.isSafeInteger(before) || before <= 0) throw errors.invalidArgument("invalid_page_token", "page_token is not one this server issued");
    }
    const rows = await this.ds.manager.find(ProofRecordEntity, {
      where: { kind: PROOF_KIND.settledOutcome, ...(before ? { sequence: LessThan(before) } : {}) },
      order: { sequence: "DESC" },
      take: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      proofs: page.map((r) => toProofRecordProto(r, this.key)),
      nextPageToken: rows.length > limit ? Buffer.from(String(page.at(-1)!.sequence)).toString("base64url") : "",
    };
  }

  async getSettlementProof(req: GetSettlementProofRequest) {
    const row = await this.ds.manager.findOneBy(ProofRecordEntity, { kind: PROOF_KIND.settledOutcome, settlementRef: req.txHash.toLowerCase() });
    if (!row) throw errors.notFound("proof_not_found", `no settlement proof for ${req.txHash}`);
    return { proof: toProofRecordProto(row, this.key, await inclusionOf(this.ds.manager, row)) };
  }

  getSigningKeys() {
    return {
      ed25519PublicKeys: [this.key.signer.publicKeyBase64()],
      canonicalization: CANONICALIZATION,
      anchorAddress: this.anchors?.address ?? "",
      anchorNetwork: this.anchors?.network ?? "",
      merkleTree: MERKLE_TREE,
    };
  }

  /** Every record after the cursor in rail order (optionally only some kinds), then new ones as they come. */
  async *streamProofs(req: StreamProofsRequest, ctx: HandlerContext) {
    let cursor = Number(req.afterSequence);
    if (!Number.isSafeInteger(cursor) || cursor < 0) throw errors.invalidArgument("invalid_cursor", "after_sequence must be a sequence from this rail");
    const kinds = req.kinds.length ? { kind: In(req.kinds) } : {};
    while (!ctx.signal.aborted) {
      const rows = await this.ds.manager.find(ProofRecordEntity, { where: { sequence: MoreThan(cursor), ...kinds }, order: { sequence: "ASC" }, take: STREAM_BATCH });
      for (const r of rows) {
        yield { proof: toProofRecordProto(r, this.key) };
        cursor = r.sequence;
      }
      if (rows.length === STREAM_BATCH) continue;
      if (!req.follow) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, FOLLOW_POLL_MS);
        ctx.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }

  /** Checks content against a single-use seal; the first matching verification uses it. */
  verifySeal(req: VerifySealRequest) {
    return verifySeal(this.ds, this.key, req);
  }

  async getProof(req: GetProofRequest) {
    const row = await this.ds.manager.findOneBy(ProofRecordEntity, { proofId: req.proofId });
    if (!row) throw errors.notFound("proof_not_found", `no proof ${req.proofId}`);
    return { proof: toProofRecordProto(row, this.key, await inclusionOf(this.ds.manager, row)) };
  }
}

import type { ServiceImpl } from "@connectrpc/connect";
import { LessThan, type DataSource } from "typeorm";
import type { GetProofRequest, GetSettlementProofRequest, ListSettlementProofsRequest, ProofService } from "../../gen/svc/proof/v1/proof_service_pb.js";
import { errors } from "../platform/rpc/errors.js";
import { ProofRecordEntity } from "./proof-record.entity.js";
import { toProofRecordProto } from "./proof.mapper.js";
import { PROOF_KIND, type ProofKey } from "./proof-recorder.js";

// The public proof rail: settlement proofs, newest first, paged by sequence.

export const PROOF_PAGE_DEFAULT = 50;
export const PROOF_PAGE_MAX = 500;

// GetSigningKeys and StreamProofs land with the proof-rail issue; until then they answer Unimplemented.
export class ProofServiceImpl implements Partial<ServiceImpl<typeof ProofService>> {
  constructor(private readonly ds: DataSource, private readonly key: ProofKey) {}

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
    return { proof: toProofRecordProto(row, this.key) };
  }

  async getProof(req: GetProofRequest) {
    const row = await this.ds.manager.findOneBy(ProofRecordEntity, { proofId: req.proofId });
    if (!row) throw errors.notFound("proof_not_found", `no proof ${req.proofId}`);
    return { proof: toProofRecordProto(row, this.key) };
  }
}

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ProofRecordSchema, type ProofRecord } from "../../gen/svc/proof/v1/proof_pb.js";
import type { ProofRecordEntity } from "./proof-record.entity.js";
import { signatureDisclosure, type ProofKey } from "./proof-recorder.js";

export interface Inclusion {
  root: string;
  leafIndex: bigint;
  path: string[];
  anchorTxHash: string;
  anchorNetwork: string;
}

export function toProofRecordProto(e: ProofRecordEntity, key: ProofKey, inclusion?: Inclusion): ProofRecord {
  const body = JSON.parse(e.bodyJson) as Record<string, unknown>;
  const hasReceipt = body.svc_fee_bps !== undefined;
  return create(ProofRecordSchema, {
    proofId: e.proofId,
    kind: e.kind,
    settlementRef: e.settlementRef ?? "",
    taskClass: e.taskClass,
    ts: timestampFromDate(e.ts),
    body: body as never,
    recordSha256: e.recordSha256,
    integritySignature: e.integritySignature,
    signatureDisclosure: signatureDisclosure(key),
    ed25519Signature: e.ed25519Signature ?? "",
    receipt: hasReceipt
      ? { svcFeeBps: Number(body.svc_fee_bps), svcFeeAmount: String(body.svc_fee_amount), providerPayoutAmount: String(body.provider_payout_amount) }
      : undefined,
    sequence: BigInt(e.sequence),
    inclusion,
  });
}

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  BidSchema,
  BidState,
  JobSchema,
  JobState,
  PayoutSchema,
  RequestSchema,
  RequestState,
  type Bid,
  type Job,
  type Payout,
  type Request,
} from "../../gen/svc/marketplace/v1/marketplace_pb.js";
import { DisputeSchema, type Dispute } from "../../gen/svc/marketplace/v1/marketplace_service_pb.js";
import type { DisputeEntity } from "../arbitration/dispute.entity.js";
import type { MarketBidEntity, MarketJobEntity, MarketRequestEntity, PayoutEntity } from "./marketplace.entity.js";

const REQUEST_STATES = { open: RequestState.OPEN, assigned: RequestState.ASSIGNED, completed: RequestState.COMPLETED, cancelled: RequestState.CANCELLED, expired: RequestState.EXPIRED };
const BID_STATES = { submitted: BidState.SUBMITTED, accepted: BidState.ACCEPTED, rejected: BidState.REJECTED, withdrawn: BidState.WITHDRAWN };
const JOB_STATES = { assigned: JobState.ASSIGNED, completed: JobState.COMPLETED, paid: JobState.PAID, failed: JobState.FAILED };

export function toPayoutProto(p: PayoutEntity): Payout {
  return create(PayoutSchema, {
    payoutId: p.payoutId,
    jobId: p.jobId,
    grossAmount: p.gross.toString(),
    svcFeeBps: p.feeBps,
    feeAmount: p.fee.toString(),
    netAmount: p.net.toString(),
    dynamicFeeBps: p.dynamicFeeBps,
    state: p.state,
    rail: p.rail ?? "",
    txHash: p.txHash ?? "",
    releaseTime: p.releaseTime ? timestampFromDate(p.releaseTime) : undefined,
  });
}

export function toBidProto(b: MarketBidEntity, score: number): Bid {
  return create(BidSchema, {
    bidId: b.bidId,
    requestId: b.requestId,
    capabilityId: b.capabilityId,
    agentName: b.agentName,
    displayName: b.displayName,
    priceAmount: b.price === null ? undefined : b.price.toString(),
    etaSeconds: b.etaSeconds ?? undefined,
    state: BID_STATES[b.state],
    score,
    createTime: timestampFromDate(b.createTime),
  });
}

export function toJobProto(j: MarketJobEntity, providerName: string, payout?: PayoutEntity | null): Job {
  return create(JobSchema, {
    jobId: j.jobId,
    requestId: j.requestId,
    bidId: j.bidId,
    providerAgentId: j.providerAgentId,
    providerName,
    requesterAgentId: j.requesterAgentId,
    state: JOB_STATES[j.state],
    amount: j.amount.toString(),
    resultSummary: j.resultSummary ?? "",
    contentSha256: j.contentSha256 ?? "",
    payout: payout ? toPayoutProto(payout) : undefined,
    createTime: timestampFromDate(j.createTime),
    completeTime: j.completeTime ? timestampFromDate(j.completeTime) : undefined,
  });
}

export function toRequestProto(r: MarketRequestEntity, requesterName: string, escrowHeld: bigint, bids: Bid[], jobs: Job[]): Request {
  return create(RequestSchema, {
    requestId: r.requestId,
    capabilityId: r.capabilityId,
    taskDescription: r.taskDescription,
    budgetAmount: r.budget.toString(),
    tags: JSON.parse(r.tagsJson) as string[],
    witnessOptout: r.witnessOptout,
    requesterAgentId: r.requesterAgentId,
    requesterName,
    state: REQUEST_STATES[r.state],
    escrow: {
      amount: r.budget.toString(),
      heldAmount: escrowHeld.toString(),
      state: r.state === "open" ? "held" : r.state === "assigned" || r.state === "completed" ? "assigned" : "returned",
      ledgerRef: `liability:escrow:${r.requestId}`,
    },
    bids: [...bids].sort((a, b) => b.score - a.score),
    jobs,
    createTime: timestampFromDate(r.createTime),
    expireTime: timestampFromDate(r.expireTime),
  });
}

export function toDisputeProto(d: DisputeEntity): Dispute {
  return create(DisputeSchema, {
    disputeId: d.disputeId,
    jobId: d.jobId,
    serviceJobId: d.serviceJobId,
    claimant: d.claimant,
    claim: d.claim,
    state: d.state,
    verdict: d.verdict ?? "",
    rationale: d.rationale ?? "",
    proofId: d.proofId ?? "",
  });
}

import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { In, MoreThan, type DataSource } from "typeorm";
import {
  SeatSchema,
  Verdict,
  type AttestRequest,
  type EnrollWitnessRequest,
  type GetJobDeliverableRequest,
  type ListSeatsRequest,
  type WitnessService,
} from "../../gen/svc/witness/v1/witness_service_pb.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { forUpdate } from "../platform/db/locking.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { newId } from "../platform/ids.js";
import { errors } from "../platform/rpc/errors.js";
import { MarketJobEntity, MarketRequestEntity } from "../marketplace/marketplace.entity.js";
import type { AgentStore } from "../registry/agent-store.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../proof/proof-recorder.js";
import type { ReputationEngine } from "../reputation/reputation-engine.js";
import { AttestationEntity, WitnessEnrollmentEntity } from "./witness.entity.js";
import { WITNESS_PROGRAM } from "./witness-program.js";

// The witness program (advisory): enrolled agents attest to released deliverables of judgment work
// (capability class research, analysis or content) for reputation credit. Seats: at most 2 outside
// witnesses per job, within 168 hours of release, never the job's requester or provider, never when
// the requester opted out. Each credited attestation is a flat quality 0.6, at most 5 per witness per
// UTC day; verdicts are published as proofs (kind 30110) and hold or release no funds.

const VERDICTS: Record<number, string> = { [Verdict.PASS]: "pass", [Verdict.FAIL]: "fail", [Verdict.INCONCLUSIVE]: "inconclusive" };
const WINDOW_MS = WITNESS_PROGRAM.seatWindowHours * 3600_000;

/** The capability class of a request: the part of capability_id before its first `.`, `:` or `/`. */
export function capabilityClass(capabilityId: string): string {
  return capabilityId.toLowerCase().split(/[.:/]/)[0]!;
}

export class WitnessServiceImpl implements ServiceImpl<typeof WitnessService> {
  constructor(
    private readonly ds: DataSource,
    private readonly agents: AgentStore,
    private readonly proofKey: ProofKey,
    private readonly reputation: ReputationEngine,
  ) {}

  async enrollWitness(req: EnrollWitnessRequest, ctx: HandlerContext) {
    const me = await this.agents.authenticate(ctx);
    const unknown = req.families.find((f) => !(WITNESS_PROGRAM.eligibleFamilies as readonly string[]).includes(f));
    if (unknown) throw errors.invalidArgument("invalid_family", `witnesses judge ${WITNESS_PROGRAM.eligibleFamilies.join(", ")} work; not ${unknown}`);
    const families = req.families.length ? [...new Set(req.families)] : [...WITNESS_PROGRAM.eligibleFamilies];
    const now = new Date();
    await this.ds.manager.delete(WitnessEnrollmentEntity, { agentId: me.agentId });
    await this.ds.manager.insert(WitnessEnrollmentEntity, { agentId: me.agentId, familiesJson: JSON.stringify(families), enrollTime: now });
    return { agentId: me.agentId, families, enrollTime: timestampFromDate(now) };
  }

  async listSeats(req: ListSeatsRequest) {
    const size = Math.min(req.pageSize > 0 ? req.pageSize : 50, 200);
    const offset = req.pageToken ? Number(Buffer.from(req.pageToken, "base64url").toString()) : 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw errors.invalidArgument("invalid_page_token", "page_token is not one this server issued");
    const jobs = await this.ds.manager.find(MarketJobEntity, { where: { state: In(["completed", "paid"]), completeTime: MoreThan(new Date(Date.now() - WINDOW_MS)) }, order: { completeTime: "DESC" } });
    const seats = [];
    for (const job of jobs) {
      const request = await this.ds.manager.findOneBy(MarketRequestEntity, { requestId: job.requestId });
      if (!request || !this.eligible(request)) continue;
      const taken = await this.ds.manager.countBy(AttestationEntity, { jobId: job.jobId });
      if (taken >= WITNESS_PROGRAM.seatsPerJob) continue;
      seats.push(
        create(SeatSchema, {
          jobId: job.jobId,
          capabilityId: request.capabilityId,
          contentSha256: job.contentSha256 ?? "",
          seatsOpen: WITNESS_PROGRAM.seatsPerJob - taken,
          closeTime: timestampFromDate(new Date(job.completeTime!.getTime() + WINDOW_MS)),
        }),
      );
    }
    return { seats: seats.slice(offset, offset + size), nextPageToken: seats.length > offset + size ? Buffer.from(String(offset + size)).toString("base64url") : "" };
  }

  async getJobDeliverable(req: GetJobDeliverableRequest, ctx: HandlerContext) {
    const me = await this.agents.authenticate(ctx);
    const { job } = await this.seatFor(me.agentId, req.jobId, true);
    return { jobId: job.jobId, contentMarkdown: job.deliverable ?? "", contentSha256: job.contentSha256 ?? "", resultSummary: job.resultSummary ?? "" };
  }

  async attest(req: AttestRequest, ctx: HandlerContext) {
    const me = await this.agents.authenticate(ctx);
    const verdict = VERDICTS[req.verdict];
    if (!verdict) throw errors.invalidArgument("invalid_verdict", "verdict must be pass, fail or inconclusive", [{ field: "verdict", description: "required" }]);
    const reason = req.reason.trim();
    if (reason.length < WITNESS_PROGRAM.minReasonLength) throw errors.invalidArgument("reason_too_short", `reason must be at least ${WITNESS_PROGRAM.minReasonLength} characters`, [{ field: "reason", description: "too short" }]);
    const { job } = await this.seatFor(me.agentId, req.jobId, false);
    if (req.contentSha256.toLowerCase() !== job.contentSha256) throw errors.failedPrecondition("hash_mismatch", "content_sha256 is not the hash of the released deliverable");
    const now = new Date();
    const day = now.toISOString().slice(0, 10);
    let result;
    try {
      result = await runInTransaction(this.ds, async (m) => {
        // The job's row is the lock: two witnesses racing for the last seat are serialized.
        await m.findOne(MarketJobEntity, { where: { jobId: job.jobId }, ...forUpdate(m) });
        if ((await m.countBy(AttestationEntity, { jobId: job.jobId })) >= WITNESS_PROGRAM.seatsPerJob) throw errors.failedPrecondition("seats_full", "both outside witness seats of this job are taken");
        const credited = (await m.countBy(AttestationEntity, { witnessAgentId: me.agentId, day, credited: true })) < WITNESS_PROGRAM.dailyCreditCap;
        const attestationId = newId("att");
        const proof = await recordProof(m, this.proofKey, {
          kind: PROOF_KIND.audit,
          settlementRef: attestationId,
          taskClass: "witness",
          ts: now,
          body: { attestation_id: attestationId, job_id: job.jobId, witness: me.agentId, verdict, content_sha256: job.contentSha256, reason, credited, quality: credited ? WITNESS_PROGRAM.creditQuality : 0, mode: WITNESS_PROGRAM.mode },
        });
        await m.insert(AttestationEntity, { attestationId, jobId: job.jobId, witnessAgentId: me.agentId, verdict, contentSha256: job.contentSha256!, reason, credited, day, proofId: proof.proofId, createTime: now });
        return { attestationId, credited, proofId: proof.proofId };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists("already_attested", "this witness already attested to this job");
      throw err;
    }
    await Promise.all([this.reputation.refresh(me.agentId), this.reputation.refresh(job.providerAgentId)]);
    return { attestationId: result.attestationId, jobId: job.jobId, verdict: req.verdict, credited: result.credited, creditQuality: result.credited ? WITNESS_PROGRAM.creditQuality : 0, proofId: result.proofId };
  }

  private eligible(request: MarketRequestEntity): boolean {
    return !request.witnessOptout && (WITNESS_PROGRAM.eligibleFamilies as readonly string[]).includes(capabilityClass(request.capabilityId));
  }

  /** The job behind a seat this agent may take (or holds, when `holding` allows it), or a refusal naming why. */
  private async seatFor(agentId: string, jobId: string, holding: boolean) {
    if (!(await this.ds.manager.findOneBy(WitnessEnrollmentEntity, { agentId }))) throw errors.failedPrecondition("not_enrolled", "enroll first: POST /a2a/witness/enroll");
    const job = await this.ds.manager.findOneBy(MarketJobEntity, { jobId });
    if (!job) throw errors.notFound("job_not_found", `no job ${jobId}`);
    if (agentId === job.requesterAgentId || agentId === job.providerAgentId) throw errors.permissionDenied("own_job", "a witness cannot witness a job it bought or delivered");
    const request = await this.ds.manager.findOneBy(MarketRequestEntity, { requestId: job.requestId });
    if (job.state !== "completed" && job.state !== "paid") throw errors.failedPrecondition("no_seat", "the job's deliverable is not released");
    if (!request || !this.eligible(request)) throw errors.failedPrecondition("no_seat", "this job opens no witness seats (not judgment work, or the requester opted out)");
    if (Date.now() - job.completeTime!.getTime() > WINDOW_MS) throw errors.failedPrecondition("seat_window_closed", `the ${WITNESS_PROGRAM.seatWindowHours}-hour seat window has closed`);
    const mine = await this.ds.manager.findOneBy(AttestationEntity, { jobId, witnessAgentId: agentId });
    if (!holding && mine) throw errors.alreadyExists("already_attested", "this witness already attested to this job");
    if (!mine && (await this.ds.manager.countBy(AttestationEntity, { jobId })) >= WITNESS_PROGRAM.seatsPerJob) throw errors.failedPrecondition("seats_full", "both outside witness seats of this job are taken");
    return { job, request };
  }
}

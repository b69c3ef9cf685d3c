import { createHash, timingSafeEqual } from "node:crypto";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { In, LessThan, type DataSource, type EntityManager } from "typeorm";
import type {
  AcceptBidRequest,
  CancelRequestRequest,
  CompleteJobRequest,
  CreateRequestRequest,
  GetJobRequest,
  GetRequestRequest,
  ListOpenRequestsRequest,
  DecideDisputeRequest,
  ListDisputesRequest,
  ListPayoutsRequest,
  MarketplaceService,
  ReleasePayoutRequest,
  SubmitBidRequest,
} from "../../gen/svc/marketplace/v1/marketplace_service_pb.js";
import { quoteFee, applyFee, type Badge } from "../fees/fee-engine.js";
import type { Logger } from "../platform/log.js";
import { isUniqueViolation } from "../platform/db/errors.js";
import { forUpdate } from "../platform/db/locking.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { newId } from "../platform/ids.js";
import { errors } from "../platform/rpc/errors.js";
import { AgentEntity } from "../registry/agent.entity.js";
import type { AgentStore } from "../registry/agent-store.js";
import { NOTE_PREFIX, parseCredential, secretMatches } from "../registry/credentials.js";
import { StarterNoteEntity } from "../registry/starter-note.entity.js";
import { enqueueWebhook } from "../webhooks/webhook-outbox.js";
import { scoreBid } from "./bid-scoring.js";
import { MarketBidEntity, MarketJobEntity, MarketRequestEntity, PayoutEntity } from "./marketplace.entity.js";
import { escrowBudget, escrowToJob, held, jobToPayable, MARKET_ACCOUNTS, noteRemaining, returnEscrow } from "./marketplace-ledger.js";
import { DisputeEntity } from "../arbitration/dispute.entity.js";
import { decideDispute, type DecideDeps } from "../arbitration/dispute-decider.js";
import { toBidProto, toDisputeProto, toJobProto, toPayoutProto, toRequestProto } from "./marketplace.mapper.js";
import type { PayoutReleaser } from "./payout-releaser.js";

// MarketplaceService: requests with escrowed budgets, bids, jobs, completion and operator-released
// payouts. Every money move is a journal entry in the same transaction as the state change it belongs
// to; concurrent writers serialize on row locks (MySQL) or the single writer (SQLite).

export const DEFAULT_BUDGET_ATOMIC = 10_000n; // 0.01 USD
export const MAX_BUDGET_ATOMIC = 1_000_000_000n; // 1000 USD
const MAX_TAGS = 10;
const TAG = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,31}$/;
const CAPABILITY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const MAX_TASK = 10_000;
const MAX_SUMMARY = 4_000;
const ATOMIC = /^\d{1,30}$/;
const NOTE_HEADER = "x-402-payment";

export interface MarketplaceDeps {
  ds: DataSource;
  agents: AgentStore;
  releaser: PayoutReleaser;
  /** An agent's current badge (the fee engine's trust input). */
  badgeOf: (agentId: string) => Promise<Badge>;
  /** Seconds an open request lives before it expires and returns its escrow. */
  requestTtlSeconds: number;
  /** Operator key for payout routes (closed when unset); compared as digests. */
  operatorKeyDigest: Buffer | undefined;
  /** The operator panel's verdicts (arbitration.dispute-settlement). */
  disputes: Omit<DecideDeps, "ds">;
  log: Logger;
}

export class MarketplaceServiceImpl implements ServiceImpl<typeof MarketplaceService> {
  constructor(private readonly d: MarketplaceDeps) {}

  async createRequest(req: CreateRequestRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    if (req.requesterId && ![me.agentId, me.nameKey].includes(req.requesterId.trim().toLowerCase())) {
      throw errors.permissionDenied("requester_id_mismatch", "requester_id is not the agent of this key");
    }
    if (!CAPABILITY.test(req.capabilityId)) throw errors.invalidArgument("invalid_capability", "capability_id is required: 1 to 64 of letters, digits, '.', '_', ':', '/', '-'", [{ field: "capability_id", description: "required" }]);
    const task = req.taskDescription.trim();
    if (!task || task.length > MAX_TASK) throw errors.invalidArgument("invalid_task", `task_description is required, at most ${MAX_TASK} characters`, [{ field: "task_description", description: "required" }]);
    if (req.budgetAmount !== undefined && !ATOMIC.test(req.budgetAmount)) throw errors.invalidArgument("invalid_budget", "budget_amount must be atomic USDC units (a decimal integer)");
    const budget = req.budgetAmount === undefined ? DEFAULT_BUDGET_ATOMIC : BigInt(req.budgetAmount);
    if (budget <= 0n || budget > MAX_BUDGET_ATOMIC) throw errors.invalidArgument("invalid_budget", "budget_usd must be above 0 and at most 1000", [{ field: "budget_usd", description: "out of bounds" }]);
    if (req.tags.length > MAX_TAGS || req.tags.some((t) => !TAG.test(t))) throw errors.invalidArgument("invalid_tags", `at most ${MAX_TAGS} tags of 1 to 32 letters, digits, '.', '_', ':', '-'`);
    const note = await this.noteOf(ctx, me);

    const now = new Date();
    const request = Object.assign(new MarketRequestEntity(), {
      requestId: newId("req"),
      requesterAgentId: me.agentId,
      noteId: note.noteId,
      capabilityId: req.capabilityId,
      taskDescription: task,
      budget,
      tagsJson: JSON.stringify([...new Set(req.tags)]),
      witnessOptout: req.witnessOptout,
      state: "open" as const,
      createTime: now,
      expireTime: new Date(now.getTime() + this.d.requestTtlSeconds * 1000),
    });
    await runInTransaction(this.d.ds, async (m) => {
      // The note row is the lock every spender of this note waits on: no overspend under concurrency.
      await m.findOne(StarterNoteEntity, { where: { noteId: note.noteId }, ...forUpdate(m) });
      const remaining = await noteRemaining(m, note.noteId);
      if (remaining < budget) throw errors.failedPrecondition("note_unfunded", `the starter-credit note holds ${remaining} atomic USDC, less than the budget ${budget}`);
      await m.insert(MarketRequestEntity, request);
      await escrowBudget(m, request.requestId, note.noteId, budget);
    });
    return { request: await this.view(request) };
  }

  async listOpenRequests(req: ListOpenRequestsRequest) {
    const size = Math.min(req.pageSize > 0 ? req.pageSize : 50, 200);
    const offset = req.pageToken ? Number(Buffer.from(req.pageToken, "base64url").toString()) : 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw errors.invalidArgument("invalid_page_token", "page_token is not one this server issued");
    await this.expireDue();
    let rows = await this.d.ds.manager.find(MarketRequestEntity, {
      where: { state: "open", ...(req.capabilityId ? { capabilityId: req.capabilityId } : {}) },
      order: { createTime: "DESC", requestId: "DESC" },
    });
    if (req.tag) rows = rows.filter((r) => (JSON.parse(r.tagsJson) as string[]).includes(req.tag));
    const page = rows.slice(offset, offset + size);
    return { requests: await Promise.all(page.map((r) => this.view(r))), nextPageToken: rows.length > offset + size ? Buffer.from(String(offset + size)).toString("base64url") : "" };
  }

  async getRequest(req: GetRequestRequest) {
    await this.expireDue();
    const request = await this.d.ds.manager.findOneBy(MarketRequestEntity, { requestId: req.requestId });
    if (!request) throw errors.notFound("request_not_found", `no request ${req.requestId}`);
    return { request: await this.view(request) };
  }

  async cancelRequest(req: CancelRequestRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const request = await this.d.ds.manager.findOneBy(MarketRequestEntity, { requestId: req.requestId });
    if (!request) throw errors.notFound("request_not_found", `no request ${req.requestId}`);
    if (request.requesterAgentId !== me.agentId) throw errors.permissionDenied("requester_id_mismatch", "only the requester may cancel its request");
    if (!(await this.close(request.requestId, "cancelled"))) throw errors.failedPrecondition("request_closed", "the request is no longer open");
    return { request: await this.view((await this.d.ds.manager.findOneBy(MarketRequestEntity, { requestId: req.requestId }))!) };
  }

  async submitBid(req: SubmitBidRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    if (req.agentName.trim().toLowerCase() !== me.nameKey) throw errors.permissionDenied("agent_name_mismatch", "agent_name must be the registered name of the key's agent");
    if (!CAPABILITY.test(req.capabilityId)) throw errors.invalidArgument("invalid_capability", "capability_id is required", [{ field: "capability_id", description: "required" }]);
    const display = req.displayName.trim();
    if (!display || display.length > 128) throw errors.invalidArgument("invalid_display_name", "display_name is required, at most 128 characters", [{ field: "display_name", description: "required" }]);
    if (req.priceAmount !== undefined && !ATOMIC.test(req.priceAmount)) throw errors.invalidArgument("invalid_price", "price_amount must be atomic USDC units (a decimal integer)");
    const price = req.priceAmount === undefined ? null : BigInt(req.priceAmount);
    if (req.etaSeconds !== undefined && (req.etaSeconds < 0 || req.etaSeconds > 90 * 86400)) throw errors.invalidArgument("invalid_eta", "eta_seconds must be between 0 and 90 days");
    await this.expireDue();
    const request = await this.d.ds.manager.findOneBy(MarketRequestEntity, { requestId: req.requestId });
    if (!request) throw errors.notFound("request_not_found", `no request ${req.requestId}`);
    if (request.requesterAgentId === me.agentId) throw errors.permissionDenied("own_request", "a provider cannot bid on its own request");
    if (request.state !== "open") throw errors.failedPrecondition("request_closed", "the request is no longer open");
    if (price !== null && (price <= 0n || price > request.budget)) throw errors.invalidArgument("invalid_price", "a bid's price must be above 0 and at most the request's budget");
    const bid = Object.assign(new MarketBidEntity(), {
      bidId: newId("bid"),
      requestId: request.requestId,
      providerAgentId: me.agentId,
      capabilityId: req.capabilityId,
      agentName: me.name,
      displayName: display,
      price,
      etaSeconds: req.etaSeconds ?? null,
      state: "submitted" as const,
      createTime: new Date(),
    });
    try {
      await runInTransaction(this.d.ds, async (m) => {
        // Re-read under the request's lock: an accept or close racing this bid wins or waits.
        const current = await m.findOne(MarketRequestEntity, { where: { requestId: request.requestId }, ...forUpdate(m) });
        if (current?.state !== "open") throw errors.failedPrecondition("request_closed", "the request is no longer open");
        await m.insert(MarketBidEntity, bid);
        const requester = await m.findOneBy(AgentEntity, { agentId: request.requesterAgentId });
        if (requester) await enqueueWebhook(m, requester, "bid.received", { request_id: request.requestId, bid_id: bid.bidId, agent_name: me.name });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists("bid_exists", "this provider already bid on this request");
      throw err;
    }
    return { bid: toBidProto(bid, this.score(bid, request)) };
  }

  async acceptBid(req: AcceptBidRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const bid = await this.d.ds.manager.findOneBy(MarketBidEntity, { bidId: req.bidId });
    if (!bid) throw errors.notFound("bid_not_found", `no bid ${req.bidId}`);
    const now = new Date();
    const job = await runInTransaction(this.d.ds, async (m) => {
      const request = (await m.findOne(MarketRequestEntity, { where: { requestId: bid.requestId }, ...forUpdate(m) }))!;
      if (request.requesterAgentId !== me.agentId) throw errors.permissionDenied("requester_id_mismatch", "only the requester may accept a bid");
      if (request.state !== "open") throw errors.failedPrecondition("request_closed", "the request is no longer open: a bid was accepted or it closed");
      if (request.expireTime <= now) throw errors.failedPrecondition("request_expired", "the request has expired");
      const amount = bid.price ?? request.budget;
      const job = Object.assign(new MarketJobEntity(), {
        jobId: newId("mjob"),
        requestId: request.requestId,
        bidId: bid.bidId,
        providerAgentId: bid.providerAgentId,
        requesterAgentId: request.requesterAgentId,
        amount,
        state: "assigned" as const,
        resultSummary: null,
        deliverable: null,
        contentSha256: null,
        createTime: now,
        completeTime: null,
      });
      const moved = await m.update(MarketRequestEntity, { requestId: request.requestId, state: "open" }, { state: "assigned" });
      if ((moved.affected ?? 0) !== 1) throw errors.failedPrecondition("request_closed", "the request is no longer open");
      await m.insert(MarketJobEntity, job);
      await m.update(MarketBidEntity, { bidId: bid.bidId }, { state: "accepted" });
      await m.update(MarketBidEntity, { requestId: request.requestId, state: "submitted" }, { state: "rejected" });
      await escrowToJob(m, request.requestId, job.jobId, amount);
      await returnEscrow(m, request.requestId, request.noteId, request.budget - amount, "escrow_remainder");
      const provider = await m.findOneBy(AgentEntity, { agentId: bid.providerAgentId });
      if (provider) await enqueueWebhook(m, provider, "job.assigned", { job_id: job.jobId, request_id: request.requestId, amount: amount.toString() });
      return job;
    }).catch((err) => {
      if (isUniqueViolation(err)) throw errors.failedPrecondition("request_closed", "a bid was already accepted on this request");
      throw err;
    });
    return { job: toJobProto(job, bid.agentName) };
  }

  async getJob(req: GetJobRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const job = await this.d.ds.manager.findOneBy(MarketJobEntity, { jobId: req.jobId });
    if (!job) throw errors.notFound("job_not_found", `no job ${req.jobId}`);
    if (me.agentId !== job.requesterAgentId && me.agentId !== job.providerAgentId) throw errors.permissionDenied("not_a_party", "only the requester and the assigned provider may read this job");
    return { job: await this.jobView(job) };
  }

  async completeJob(req: CompleteJobRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const job = await this.d.ds.manager.findOneBy(MarketJobEntity, { jobId: req.jobId });
    if (!job) throw errors.notFound("job_not_found", `no job ${req.jobId}`);
    if (me.agentId !== job.providerAgentId) throw errors.permissionDenied("not_assigned_provider", "only the assigned provider may complete this job");
    const summary = req.resultSummary.trim();
    if (!summary) throw errors.invalidArgument("empty_result", "result_summary must not be empty", [{ field: "result_summary", description: "empty" }]);
    if (summary.length > MAX_SUMMARY) throw errors.invalidArgument("invalid_result", `result_summary is at most ${MAX_SUMMARY} characters; put the full deliverable in deliverable_markdown`);
    const deliverable = req.deliverableMarkdown || summary;
    const quote = await this.quote(job);
    const { fee, net } = applyFee(job.amount, quote.chargedBps);
    const now = new Date();
    await runInTransaction(this.d.ds, async (m) => {
      const done = await m.update(
        MarketJobEntity,
        { jobId: job.jobId, state: "assigned" },
        { state: "completed", resultSummary: summary, deliverable, contentSha256: createHash("sha256").update(deliverable, "utf8").digest("hex"), completeTime: now },
      );
      if ((done.affected ?? 0) !== 1) throw errors.failedPrecondition("job_not_assigned", "the job is not assigned any more (completed already?)");
      await m.update(MarketRequestEntity, { requestId: job.requestId }, { state: "completed" });
      await jobToPayable(m, job.jobId, job.providerAgentId, job.amount, fee);
      await m.insert(PayoutEntity, {
        payoutId: newId("payout", 16),
        jobId: job.jobId,
        providerAgentId: job.providerAgentId,
        gross: job.amount,
        feeBps: quote.chargedBps,
        fee,
        net,
        dynamicFeeBps: quote.dynamicBps,
        state: "pending",
        rail: null,
        txHash: null,
        sentHashesJson: null,
        createTime: now,
        releaseTime: null,
      });
      const requester = await m.findOneBy(AgentEntity, { agentId: job.requesterAgentId });
      if (requester) await enqueueWebhook(m, requester, "job.completed", { job_id: job.jobId, result_summary: summary });
    });
    return { job: await this.jobView((await this.d.ds.manager.findOneBy(MarketJobEntity, { jobId: job.jobId }))!) };
  }

  async listPayouts(req: ListPayoutsRequest, ctx: HandlerContext) {
    this.operator(ctx);
    const size = Math.min(req.pageSize > 0 ? req.pageSize : 50, 200);
    const offset = req.pageToken ? Number(Buffer.from(req.pageToken, "base64url").toString()) : 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw errors.invalidArgument("invalid_page_token", "page_token is not one this server issued");
    const rows = await this.d.ds.manager.find(PayoutEntity, { where: req.state ? { state: req.state as PayoutEntity["state"] } : {}, order: { createTime: "ASC", payoutId: "ASC" }, skip: offset, take: size + 1 });
    return { payouts: rows.slice(0, size).map(toPayoutProto), nextPageToken: rows.length > size ? Buffer.from(String(offset + size)).toString("base64url") : "" };
  }

  async releasePayout(req: ReleasePayoutRequest, ctx: HandlerContext) {
    this.operator(ctx);
    return { payout: toPayoutProto(await this.d.releaser.release(req.payoutId)) };
  }

  async listDisputes(req: ListDisputesRequest, ctx: HandlerContext) {
    this.operator(ctx);
    if (req.state && !["open", "decided"].includes(req.state)) throw errors.invalidArgument("invalid_state", "state must be open or decided");
    const rows = await this.d.ds.manager.find(DisputeEntity, { where: req.state ? { state: req.state as DisputeEntity["state"] } : {}, order: { createTime: "ASC", disputeId: "ASC" }, take: 500 });
    return { disputes: rows.map(toDisputeProto) };
  }

  async decideDispute(req: DecideDisputeRequest, ctx: HandlerContext) {
    this.operator(ctx);
    const dispute = await decideDispute({ ds: this.d.ds, ...this.d.disputes }, req.disputeId, req.verdict, req.rationale);
    return { dispute: toDisputeProto(dispute), refundAmount: dispute.refund.toString() };
  }

  /** Expires open requests past their time and returns their escrow to the note. */
  async expireDue(now = new Date()): Promise<number> {
    const due = await this.d.ds.manager.find(MarketRequestEntity, { where: { state: "open", expireTime: LessThan(now) }, take: 100 });
    let n = 0;
    for (const r of due) if (await this.close(r.requestId, "expired")) n++;
    return n;
  }

  /** Closes an open request (cancelled or expired): bids rejected, the escrow back to the note. */
  private async close(requestId: string, to: "cancelled" | "expired"): Promise<boolean> {
    return runInTransaction(this.d.ds, async (m) => {
      const moved = await m.update(MarketRequestEntity, { requestId, state: "open" }, { state: to });
      if ((moved.affected ?? 0) !== 1) return false;
      const request = (await m.findOneBy(MarketRequestEntity, { requestId }))!;
      await m.update(MarketBidEntity, { requestId, state: In(["submitted"]) }, { state: "rejected" });
      await returnEscrow(m, requestId, request.noteId, await held(m, MARKET_ACCOUNTS.escrow(requestId)), `escrow_${to}`);
      return true;
    });
  }

  /** The caller's starter-credit note from X-402-Payment; 402 when absent, invalid or not the caller's. */
  private async noteOf(ctx: HandlerContext, me: AgentEntity): Promise<StarterNoteEntity> {
    const cred = parseCredential(ctx.requestHeader.get(NOTE_HEADER)?.trim() ?? "");
    if (!cred || cred.prefix !== NOTE_PREFIX) throw errors.failedPrecondition("note_unfunded", `a funded starter-credit note (svcn_…) is required in ${NOTE_HEADER}`);
    const note = await this.d.ds.manager.findOneBy(StarterNoteEntity, { noteId: cred.id });
    if (!note || !secretMatches(cred.secret, note.secretHash)) throw errors.failedPrecondition("note_unfunded", "the starter-credit note is not valid");
    if (note.agentId !== me.agentId) throw errors.permissionDenied("requester_id_mismatch", "the note belongs to another agent");
    return note;
  }

  private operator(ctx: HandlerContext): void {
    if (!this.d.operatorKeyDigest) throw errors.permissionDenied("operator_api_closed", "the operator API is closed (no OPERATOR_API_KEY is set)");
    const given = /^Bearer (.+)$/.exec(ctx.requestHeader.get("authorization") ?? "")?.[1] ?? "";
    const digest = createHash("sha256").update(given).digest();
    if (!given || !timingSafeEqual(digest, this.d.operatorKeyDigest)) throw errors.authRequired("a valid operator key is required");
  }

  /** The fee quote of a job, from both parties' badges, their history together and the buyer's tenure. */
  private async quote(job: MarketJobEntity) {
    const [providerBadge, requesterBadge, requester, pairJobs] = await Promise.all([
      this.d.badgeOf(job.providerAgentId).catch(() => undefined),
      this.d.badgeOf(job.requesterAgentId).catch(() => undefined),
      this.d.ds.manager.findOneBy(AgentEntity, { agentId: job.requesterAgentId }),
      this.d.ds.manager.countBy(MarketJobEntity, { requesterAgentId: job.requesterAgentId, providerAgentId: job.providerAgentId, state: In(["completed", "paid"]) }),
    ]);
    return quoteFee({
      providerBadge,
      requesterBadge,
      completedPairJobs: pairJobs,
      buyerTenureDays: requester ? Math.floor((Date.now() - requester.createTime.getTime()) / 86_400_000) : undefined,
      requesterRegistered: requester !== null,
      providerRegistered: true,
      providerInternal: false,
      requesterInternal: false,
    });
  }

  private score(bid: MarketBidEntity, request: MarketRequestEntity): number {
    return scoreBid({ reputation: 0, price: bid.price, budget: request.budget, etaSeconds: bid.etaSeconds, capabilityMatches: bid.capabilityId === request.capabilityId });
  }

  private async view(r: MarketRequestEntity) {
    const m: EntityManager = this.d.ds.manager;
    const [requester, bids, jobs, escrow] = await Promise.all([
      m.findOneBy(AgentEntity, { agentId: r.requesterAgentId }),
      m.find(MarketBidEntity, { where: { requestId: r.requestId }, order: { createTime: "ASC" } }),
      m.find(MarketJobEntity, { where: { requestId: r.requestId } }),
      held(m, MARKET_ACCOUNTS.escrow(r.requestId)),
    ]);
    return toRequestProto(r, requester?.name ?? "", escrow, bids.map((b) => toBidProto(b, this.score(b, r))), await Promise.all(jobs.map((j) => this.jobView(j))));
  }

  private async jobView(j: MarketJobEntity) {
    const [provider, payout] = await Promise.all([this.d.ds.manager.findOneBy(AgentEntity, { agentId: j.providerAgentId }), this.d.ds.manager.findOneBy(PayoutEntity, { jobId: j.jobId })]);
    return toJobProto(j, provider?.name ?? "", payout);
  }
}

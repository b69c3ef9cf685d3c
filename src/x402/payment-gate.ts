import { AsyncLocalStorage } from "node:async_hooks";
import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { getAddress, isAddress } from "viem";
import type { DataSource, EntityManager } from "typeorm";
import { CallServiceResponseSchema, type CallServiceResponse } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus, PaymentProofSchema, TrustEnvelopeSchema, type TrustEnvelope } from "../../gen/svc/payment/v1/payment_pb.js";
import {
  PaymentPayloadSchema,
  PaymentRequiredSchema,
  PaymentRequirementsSchema,
  SettleResponseSchema,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "../../gen/svc/payment/v1/x402_pb.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import type { Logger } from "../platform/log.js";
import type { EnforcementRecorder } from "../proof/enforcement-recorder.js";
import { databaseError, errorReason, errors, rpcError } from "../platform/rpc/errors.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { ACCOUNTS, postEntries } from "../ledger/ledger.js";
import { PROOF_KIND, recordFreshProofs, type ProofKey } from "../proof/proof-recorder.js";
import { parseInput, runEngine, SkuRefusal, type SkuHandler } from "../skus/sku-handler.js";
import type { PolicyGates } from "../policy/policy-gates.js";
import { trustEnvelope } from "../trust/trust-envelope.js";
import type { JobQueue } from "../jobs/job-queue.js";
import { COMP_SKU, type CompDecision } from "../registry/comp.service.js";
import { FacilitatorUnavailableError, type Facilitator } from "./facilitator.js";
import type { PaymentState, X402PaymentEntity } from "./payment.entity.js";
import { PaymentStore } from "./payment-store.js";
import { commitEffectOrQueue, retryDueEffects } from "./payment-effects.js";
import { challenge, matchRequirements, skuRequirements, type Challenge, type ChallengeContext } from "./requirements.js";
import { decodePaymentHeader, encodePaymentRequired, encodeSettleResponse, PaymentDecodeError, X402_HEADERS } from "./wire.js";
import { batchIndexOf } from "./settlement-batcher.js";
import { settlementRef } from "../chain/settlement-logs.js";

// The payment gate of a paid SKU call. Order: refuse what cannot be sold or has no subject (free),
// challenge, decode and match the payment, claim it exactly once, verify, run the engine, settle only
// after the deliverable exists (or the async job is accepted), then record the settlement proof and
// the ledger entry in one transaction. A refusal or a failure before settlement charges nothing.

export interface PaidCall {
  skuId: string;
  input: JsonObject;
  paymentHeader: string | undefined;
  /** `Authorization` header, if any (an agent asking for its comped audit). */
  authorization?: string;
  baseUrl: string;
  /** The `svc-jurisdiction` request header, if any. */
  jurisdiction?: string;
}

export interface PaymentGateDeps {
  ds: DataSource;
  store: PaymentStore;
  facilitator: Facilitator;
  jobs: JobQueue;
  skus: ReadonlyMap<string, SkuDefinition>;
  handlers: ReadonlyMap<string, SkuHandler<any>>;
  /** Network, treasury, timeout and fee of challenges; the base URL is per request. */
  challengeContext: Omit<ChallengeContext, "baseUrl">;
  proofKey: ProofKey;
  log: Logger;
  /** How long a duplicate request waits for the first one to finish. */
  duplicateWaitMs: number;
  /** A payment in flight for longer than this has no live request behind it: duplicates do not wait. */
  staleAfterMs: number;
  /** Resolves a payment stuck in flight against the chain (the reconciler). */
  resolveInFlight: (payment: X402PaymentEntity) => Promise<void>;
  /** Whether failed async jobs can be refunded; async SKUs are not sold otherwise. */
  canRefund: boolean;
  /** Whether a payer controls a linked ERC-8004 identity (for onboarding-gated SKUs). */
  isOnboarded: (payer: string) => Promise<boolean>;
  /** Records gate firings on the proof rail (kind 30014). */
  enforcement?: EnforcementRecorder;
  /** Evaluates and grants the comped audit for the agent of an Authorization header. */
  requestComp: (authorization: string) => Promise<CompDecision>;
  /** The policy gates (content trap, jurisdiction, circuit breakers, payer rate limit) and the manifest. */
  policy: PolicyGates;
  /** Wakes this process's job workers when a paid or comped job became claimable (every front, not only REST). */
  nudgeWorkers?: () => void;
  /** The claim priority of an async job paid by this wallet (the Operator tier's priority queue); 0 when unset. */
  jobPriority?: (payer: string) => Promise<number>;
  /** Counts call outcomes (the payments metric; `settled` is counted by the observed facilitator). */
  outcomes?: (outcome: "replayed" | "challenged" | "refused" | "failed" | "not_charged", reason?: string) => void;
}

/** The settlement receipt's header: X-PAYMENT-RESPONSE for x402 v1 clients, PAYMENT-RESPONSE for v2. */
const receiptHeader = (x402Version: number) => (x402Version === 1 ? X402_HEADERS.xPaymentResponse : X402_HEADERS.paymentResponse);

/** What the settling request already holds of its payment row (finalize need not read it back). */
interface KnownPayment {
  payment: Pick<X402PaymentEntity, "amount" | "payer" | "skuId" | "nonce" | "jobId">;
  /** The response stored at `settling`, without its payment proof. */
  response: CallServiceResponse;
  /** Its JSON form as stored at `settling` (converted once: the deliverable's Struct is most of the cost). */
  responseJson: JsonObject;
}

/** A settling request's finalize waiting to share a transaction with the others of its event-loop turn. */
interface GroupedFinalize {
  paymentId: string;
  txHash: string;
  batchIndex: number | null;
  known: KnownPayment;
  resolve(r: CallServiceResponse): void;
  reject(err: unknown): void;
}

/** A payment this transaction moved to settled, with its final response. */
interface SettledRow {
  paymentId: string;
  payment: KnownPayment["payment"];
  stored: CallServiceResponse;
  txHash: string;
  batchIndex: number | null;
}

/** A grouped finalize found a payment of its group already moved by another writer. */
class GroupRaced extends Error {}

/** One claimed payment on its way through verification, the engine and settlement. */
interface PaidAttempt {
  payment: X402PaymentEntity;
  sku: SkuDefinition;
  handler: SkuHandler<any>;
  input: unknown;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  challengeFor: (e: string) => Challenge;
  setHeader: (name: string, value: string) => void;
  /** `svc_trust.policy_manifest` of this call. */
  manifest: JsonObject;
  /** The facilitator's verification, started before the claim (it only reads). */
  verdict: Promise<VerifyResponse>;
}

/** The fee on a catalog sale: the service rate, from the provider's share (internal identities get no discount). */
export function feeSplit(amount: bigint, feeBps: number): { fee: bigint; payout: bigint } {
  const fee = (amount * BigInt(feeBps)) / 10_000n;
  return { fee, payout: amount - fee };
}

const IN_FLIGHT = ["verifying", "running", "settling"] as const;

export class PaymentGate {
  /** Finalizes of settling requests waiting for the end of this event-loop turn (see finalize). */
  private finalizeGroup: GroupedFinalize[] = [];

  constructor(private readonly d: PaymentGateDeps) {}

  /** Every front (REST, Connect, MCP, A2A) gets a database outage as 503 `database_unavailable`, never an internal error. */
  private callMapped(call: PaidCall, setHeader: (name: string, value: string) => void): Promise<CallServiceResponse> {
    return this.callGated(call, setHeader).catch((err: unknown) => {
      throw databaseError(err) ?? err;
    });
  }

  async call(call: PaidCall, setHeader: (name: string, value: string) => void): Promise<CallServiceResponse> {
    if (!this.d.outcomes) return this.callMapped(call, setHeader);
    try {
      const res = await this.callMapped(call, setHeader);
      if (!res.charged) this.d.outcomes("not_charged", res.status === CallStatus.INSUFFICIENT_SUBJECT ? "insufficient_subject" : "comped");
      return res;
    } catch (err) {
      const [outcome, reason] = outcomeOf(err);
      this.d.outcomes(outcome, reason);
      throw err;
    }
  }

  /**
   * Every check a call passes before its 402 challenge, in order (the unknown SKU, retirement, availability, input,
   * the policy gates, the subject precheck); throws the refusals. The challenge fast path runs exactly these.
   */
  async beforeChallenge(call: PaidCall): Promise<BeforeChallenge> {
    const done = checksDone.getStore();
    if (done && !done.used && done.skuId === call.skuId) {
      done.used = true;
      return done.outcome;
    }
    const sku = this.d.skus.get(call.skuId);
    if (!sku) throw errors.notFound("sku_not_found", `no service ${call.skuId} in the catalog`);
    if (sku.retired) return { kind: "unpaid", response: this.unpaid(sku, "this service is retired: no payment is taken and nothing is charged") };
    const handler = this.d.handlers.get(sku.skuId);
    if (!handler) throw errors.gateRefused("service_unavailable", `${sku.skuId} is not sold on this server yet; nothing was charged`, sku.skuId);
    if (sku.mode === "async" && !this.d.canRefund) {
      throw errors.gateRefused("service_unavailable", `${sku.skuId} is asynchronous and this server cannot refund a failed job; nothing was charged`, sku.skuId);
    }
    const input = parseInput(handler, call.input);
    const decision = await this.d.policy.beforeChallenge(sku, handler, call.input, input, call.jurisdiction);
    let missing: string | undefined;
    try {
      if (handler.precheck) missing = await handler.precheck(input, this.d.ds.manager);
    } catch (err) {
      if (err instanceof SkuRefusal) throw errors.gateRefused(err.reason, `${err.message}; nothing was charged`, sku.skuId);
      const dbDown = databaseError(err); // our database, not an upstream: 503 database_unavailable
      if (dbDown) throw dbDown;
      // Resolving the subject needs an upstream (EDGAR, a venue…) that failed: nothing is charged.
      this.d.log.warn({ err, sku: sku.skuId }, "subject check failed before any charge");
      throw errors.unavailable("upstream_unavailable", `${sku.skuId} cannot resolve its subject right now (${(err as Error).message}); nothing was charged`, err);
    }
    if (missing) return { kind: "unpaid", response: this.unpaid(sku, missing) };
    // The manifest is built on first use: the challenge (the fast path's answer) never reads it.
    const policy = this.d.policy;
    let manifest: JsonObject | undefined;
    return { kind: "challenge", sku, handler, input, get manifest() { return (manifest ??= policy.manifest(sku, decision)); } };
  }

  /** The challenge an unpaid call of `sku` is answered with (both x402 versions), as `call` builds it. */
  firstChallenge(sku: SkuDefinition, baseUrl: string): Challenge {
    const ctx: ChallengeContext = { ...this.d.challengeContext, baseUrl };
    return challenge(sku, skuRequirements(sku, ctx), ctx, PAYMENT_REQUIRED);
  }

  /**
   * Runs `fn` - the normal path of a call whose `beforeChallenge` already ran (the challenge fast path handing a
   * refusal on) - so that its `beforeChallenge` answers `outcome` once instead of running the checks again (a
   * precheck may call an upstream and count towards its circuit breaker).
   */
  reusingChecks<T>(skuId: string, outcome: Promise<BeforeChallenge>, fn: () => T): T {
    return checksDone.run({ skuId, outcome, used: false }, fn);
  }

  /** Counts a challenge answered outside `call` (the challenge fast path), as `call` counts its own. */
  countChallenged(): void {
    this.d.outcomes?.(...(challengedOutcome ??= outcomeOf(errors.failedPrecondition("payment_required", PAYMENT_REQUIRED))));
  }

  private async callGated(call: PaidCall, setHeader: (name: string, value: string) => void): Promise<CallServiceResponse> {
    const before = await this.beforeChallenge(call);
    if (before.kind === "unpaid") return before.response;
    const { sku, handler, input, manifest } = before;

    let compDenial: string | undefined;
    if (sku.skuId === COMP_SKU && !call.paymentHeader && call.authorization) {
      const decision = await this.d.requestComp(call.authorization);
      if (decision.granted) return this.comped(sku, handler, input, decision.compId, decision.agent.evmAddress!, manifest);
      compDenial = decision.reason;
    }

    const ctx: ChallengeContext = { ...this.d.challengeContext, baseUrl: call.baseUrl };
    const reqs = skuRequirements(sku, ctx);
    const challengeFor = (error: string) => challenge(sku, reqs, ctx, error);
    if (!call.paymentHeader) {
      const ch = challengeFor(PAYMENT_REQUIRED);
      if (!compDenial) throw paymentError(Code.FailedPrecondition, "payment_required", PAYMENT_REQUIRED, ch);
      // The comp was asked for and denied: the full list price is quoted, with the reason.
      throw paymentError(Code.FailedPrecondition, "payment_required", `${PAYMENT_REQUIRED} (comp denied: ${compDenial})`, ch, { [COMP_DENIAL_HEADER]: compDenial });
    }
    let payload: PaymentPayload;
    try {
      payload = decodePaymentHeader(call.paymentHeader);
    } catch (err) {
      const e = err as PaymentDecodeError;
      throw paymentError(Code.InvalidArgument, "payment_invalid", `${e.reason}: ${e.message}`, challengeFor(e.reason));
    }
    const matched = matchRequirements(payload, reqs);
    if (!matched) throw paymentError(Code.FailedPrecondition, "payment_failed", "No matching payment requirements", challengeFor("No matching payment requirements"));
    const auth = payload.payload!.authorization!;
    if (!isAddress(auth.from, { strict: false }) || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) {
      throw paymentError(Code.InvalidArgument, "payment_invalid", "invalid_payload: authorization.from or nonce is malformed", challengeFor("invalid_payload"));
    }
    const payer = getAddress(auth.from);
    const fired = (gate: string, reason: string) => this.d.enforcement?.record({ gate, reason, skuId: sku.skuId, authorization: auth, signature: payload.payload!.signature });
    if (sku.onboardingRequired && !(await this.d.isOnboarded(payer))) {
      await fired("erc8004_onboarding", "onboarding_required");
      throw errors.gateRefused(
        "onboarding_required",
        `${sku.skuId} changes state: the paying wallet ${payer} must control an ERC-8004 identity linked to a registered agent (POST /a2a/agents/{agent_id}/identity); nothing was charged`,
        "erc8004_identity",
      );
    }

    try {
      await this.d.policy.forPayer(payer);
    } catch (err) {
      await fired("payer_rate_limit", "rate_limited");
      throw err;
    }
    // Verification only reads (the signature, the chain): it runs alongside the party check and the
    // claim, and only the request that wins the claim uses its verdict. It starts after the rate limit,
    // so a refused call costs no chain reads.
    const verdict = this.d.facilitator.verify(payload, matched);
    verdict.catch(() => undefined);

    const refusal = await handler.authorize?.(input, payer, this.d.ds.manager);
    if (refusal) {
      await fired("party_check", "not_a_party");
      throw errors.permissionDenied("not_a_party", `${refusal}; nothing was charged`);
    }

    for (let round = 0; round < 3; round++) {
      const claim = await this.d.store.claim({
        network: ctx.network.caip2,
        asset: ctx.network.usdcAddress,
        payer,
        nonce: auth.nonce,
        skuId: sku.skuId,
        amount: sku.priceAtomic!,
        x402Version: payload.x402Version,
        payloadJson: JSON.stringify(toJson(PaymentPayloadSchema, payload)),
        requirementsJson: JSON.stringify(toJson(PaymentRequirementsSchema, matched)),
      });
      if (claim.claimed) return this.pay({ payment: claim.payment, sku, handler, input, payload, requirements: matched, challengeFor, setHeader, manifest, verdict });
      let existing = claim.existing;
      if (existing.skuId !== sku.skuId) {
        throw paymentError(Code.FailedPrecondition, "payment_reused", `this payment was made for ${existing.skuId}`, challengeFor("payment_reused"));
      }
      // A settling payment's first request may have lost the outcome: ask the chain before waiting.
      if (existing.state === "settling") existing = await this.resolve(existing);
      const stale = Date.now() - existing.updateTime.getTime() > this.d.staleAfterMs;
      if (!stale && (IN_FLIGHT as readonly string[]).includes(existing.state)) {
        existing = await this.d.store.waitUntilFinal(existing.paymentId, this.d.duplicateWaitMs);
        if (existing.state === "settling") existing = await this.resolve(existing);
      }
      if (existing.state === "settled" || existing.state === "refunded" || existing.state === "refunding") return this.replay(existing, payload.x402Version, setHeader);
      if ((IN_FLIGHT as readonly string[]).includes(existing.state)) throw paymentInProgress();
    }
    throw paymentInProgress();
  }

  /** A comped call: nothing is paid or charged; an async SKU's job is claimable at once. */
  private async comped(sku: SkuDefinition, handler: SkuHandler<any>, input: unknown, compId: string, wallet: string, manifest: JsonObject): Promise<CallServiceResponse> {
    const reason = `comped audit ${compId}: nothing was charged`;
    if (sku.mode === "sync") {
      const ctx = { manager: this.d.ds.manager, payer: wallet, paymentId: compId, now: new Date(), proofKey: this.d.proofKey };
      const deliverable = await runEngine(handler, input, ctx);
      if (handler.commit) await runInTransaction(this.d.ds, (m) => handler.commit!(m, deliverable, { ...ctx, manager: m }));
      return create(CallServiceResponseSchema, { skuId: sku.skuId, status: CallStatus.DELIVERED, deliverable, svcTrust: trustEnvelopeProto(deliverable, manifest), poweredBy: handler.poweredBy, charged: false, reason });
    }
    const jobId = await this.d.jobs.create(this.d.ds.manager, { skuId: sku.skuId, paymentId: compId, payer: wallet, inputJson: JSON.stringify(input), manifestJson: JSON.stringify(manifest) });
    await this.d.jobs.move(jobId, ["queued"], "pending");
    this.d.nudgeWorkers?.();
    return create(CallServiceResponseSchema, { skuId: sku.skuId, status: CallStatus.PENDING, jobId, pollUrl: `/v1/services/result/${jobId}`, poweredBy: handler.poweredBy, charged: false, reason });
  }

  private async resolve(p: X402PaymentEntity): Promise<X402PaymentEntity> {
    try {
      await this.d.resolveInFlight(p);
    } catch (err) {
      // The chain (or the database) cannot be asked now: the outcome stays unknown, nothing more is charged.
      this.d.log.warn({ err, paymentId: p.paymentId }, "could not resolve a settling payment against the chain");
      throw errors.unavailable("settlement_unknown", "the settlement outcome cannot be checked right now; send the same request with the same payment again later to receive the result", err);
    }
    return (await this.d.store.get(p.paymentId))!;
  }

  private unpaid(sku: SkuDefinition, reason: string): CallServiceResponse {
    return create(CallServiceResponseSchema, { skuId: sku.skuId, status: CallStatus.INSUFFICIENT_SUBJECT, reason, charged: false });
  }

  private async pay(a: PaidAttempt): Promise<CallServiceResponse> {
    const id = a.payment.paymentId;
    try {
      return await this.verifyRunSettle(a);
    } catch (err) {
      // Whatever failed before the settlement was sent leaves nothing charged and the payment retryable.
      // With the database down this cleanup fails too: the reconciler does it later; the first error is the answer.
      try {
        if (await this.d.store.transition(id, ["verifying", "running"], "failed", { errorReason: "internal_error" })) {
          this.d.log.error({ err, paymentId: id }, "paid call failed before settlement; not charged");
          const job = (await this.d.store.get(id))?.jobId;
          if (job) await this.d.jobs.move(job, ["queued"], "failed", { error: "payment did not settle" });
        }
      } catch (cleanup) {
        this.d.log.warn({ err: cleanup, paymentId: id }, "could not mark the interrupted payment; the reconciler will");
      }
      throw err;
    }
  }

  private async verifyRunSettle(a: PaidAttempt): Promise<CallServiceResponse> {
    const { payment, sku, handler, input, payload, requirements, challengeFor, setHeader, manifest } = a;
    const id = payment.paymentId;
    const advance = async (from: PaymentState[], to: PaymentState, patch = {}) => {
      if (!(await this.d.store.transition(id, from, to, patch))) throw paymentInProgress();
    };
    let verdict;
    try {
      verdict = await a.verdict;
    } catch (err) {
      await this.d.store.transition(id, ["verifying"], "failed", { errorReason: "facilitator_unavailable" });
      throw facilitatorDown(err);
    }
    if (!verdict.isValid) {
      await this.d.store.transition(id, ["verifying"], "rejected", { errorReason: verdict.invalidReason });
      throw paymentError(Code.FailedPrecondition, "payment_failed", `${verdict.invalidReason}: ${verdict.invalidMessage}`, challengeFor(verdict.invalidReason));
    }
    // A sync call stays `verifying` while its engine runs (nothing else tells the two apart: both are
    // ours, in flight, uncharged) and moves to `settling` with its response in one write.
    let response: CallServiceResponse;
    let jobId: string | undefined;
    if (sku.mode === "sync") {
      let deliverable: JsonObject;
      try {
        deliverable = await runEngine(handler, input, { manager: this.d.ds.manager, payer: payment.payer, paymentId: id, now: new Date(), proofKey: this.d.proofKey });
      } catch (err) {
        if (err instanceof SkuRefusal) {
          await this.d.store.transition(id, ["verifying"], "failed", { errorReason: err.reason });
          throw errors.gateRefused(err.reason, `${err.message}; nothing was charged`, sku.skuId);
        }
        await this.d.store.transition(id, ["verifying"], "failed", { errorReason: "service_failed" });
        this.d.log.error({ err, sku: sku.skuId, paymentId: id }, "service failed before settlement; not charged");
        throw databaseError(err) ?? errors.unavailable("service_failed", `${sku.skuId} failed to produce a deliverable; nothing was charged`, err);
      }
      response = create(CallServiceResponseSchema, {
        skuId: sku.skuId,
        status: CallStatus.DELIVERED,
        deliverable,
        svcTrust: trustEnvelopeProto(deliverable, manifest),
        poweredBy: handler.poweredBy,
        charged: true,
      });
    } else {
      const priority = (await this.d.jobPriority?.(payment.payer)) ?? 0;
      jobId = await this.d.jobs.create(this.d.ds.manager, { skuId: sku.skuId, paymentId: id, payer: payment.payer, inputJson: JSON.stringify(input), manifestJson: JSON.stringify(manifest), priority });
      // Recorded with the job id, so an interruption from here on fails the job too.
      if (!(await this.d.store.transition(id, ["verifying"], "running", { jobId }))) {
        await this.d.jobs.move(jobId, ["queued"], "failed", { error: "payment did not settle" });
        throw paymentInProgress();
      }
      response = create(CallServiceResponseSchema, { skuId: sku.skuId, status: CallStatus.PENDING, jobId, pollUrl: `/v1/services/result/${jobId}`, poweredBy: handler.poweredBy, charged: true });
    }

    const responseJson = toJson(CallServiceResponseSchema, response) as JsonObject;
    await advance(["verifying", "running"], "settling", { responseJson: JSON.stringify(responseJson), jobId: jobId ?? null });
    let settled: SettleResponse;
    try {
      settled = await this.d.facilitator.settle(payload, requirements, { onSubmitted: (hash, index) => this.d.store.setTxHash(id, hash, index ?? null) });
    } catch (err) {
      const ambiguous = err instanceof FacilitatorUnavailableError ? err.ambiguous : true;
      if (!ambiguous) {
        await this.d.store.transition(id, ["settling"], "failed", { errorReason: "facilitator_unavailable" });
        if (jobId) await this.d.jobs.move(jobId, ["queued"], "failed", { error: "payment did not settle" });
      }
      this.d.log.error({ err, paymentId: id, ambiguous }, "settlement did not complete");
      throw ambiguous
        ? errors.unavailable("settlement_unknown", "the settlement outcome is not known yet; send the same request with the same payment again to receive the result", err)
        : facilitatorDown(err);
    }
    if (!settled.success) {
      await this.d.store.transition(id, ["settling"], "failed", { errorReason: settled.errorReason, txHash: settled.transaction || null, batchIndex: settled.transaction ? batchIndexOf(settled) : null });
      if (jobId) await this.d.jobs.move(jobId, ["queued"], "failed", { error: `payment did not settle: ${settled.errorReason}` });
      setHeader(receiptHeader(payload.x402Version), encodeSettleResponse(settled));
      throw paymentError(Code.FailedPrecondition, "payment_failed", `settlement failed: ${settled.errorReason}`, challengeFor(settled.errorReason));
    }
    let final: CallServiceResponse;
    try {
      final = await this.finalize(id, settled.transaction, batchIndexOf(settled), { payment: { ...payment, jobId: jobId ?? null }, response, responseJson });
    } catch (err) {
      // Settled on-chain but not recorded: the row stays `settling` with its hash; a retry or start-up records it.
      this.d.log.error({ err, paymentId: id, tx: settled.transaction }, "settled on-chain but could not record it yet");
      throw errors.unavailable("settlement_unrecorded", `the payment settled on-chain (${settled.transaction}); send the same request with the same payment again to receive the result`, err);
    }
    setHeader(receiptHeader(payload.x402Version), encodeSettleResponse(settled));
    return final;
  }

  /**
   * Marks a payment settled with its transaction, and in the same database transaction writes the
   * settlement proof (kind 30120) and the ledger entry, and releases its async job. Idempotent: the
   * guarded update comes first, so a concurrent finalize (another request, another server's
   * reconciliation) waits on the row and then returns the stored result. The settling requests' finalizes
   * asked for in one turn of the event loop (the items of one batch transaction) share one database
   * transaction (a group commit); the reconciler's (`known` unset) each run alone.
   */
  async finalize(paymentId: string, txHash: string, batchIndex: number | null = null, known?: KnownPayment): Promise<CallServiceResponse> {
    const final = known ? await this.finalizeGrouped({ paymentId, txHash, batchIndex, known }) : await this.finalizeInTransaction(paymentId, txHash, batchIndex);
    if (final.jobId) this.d.nudgeWorkers?.();
    return final;
  }

  private finalizeGrouped(item: Omit<GroupedFinalize, "resolve" | "reject">): Promise<CallServiceResponse> {
    return new Promise((resolve, reject) => {
      if (this.finalizeGroup.push({ ...item, resolve, reject }) === 1) setImmediate(() => void this.flushFinalizeGroup());
    });
  }

  private async flushFinalizeGroup(): Promise<void> {
    const group = this.finalizeGroup;
    this.finalizeGroup = [];
    const alone = (g: GroupedFinalize) => this.finalizeInTransaction(g.paymentId, g.txHash, g.batchIndex, g.known).then(g.resolve, g.reject);
    if (group.length === 1) return alone(group[0]!);
    let results: (CallServiceResponse | undefined)[];
    try {
      results = await runInTransaction(this.d.ds, (m) => this.settleAll(m, group));
    } catch (err) {
      // The shared transaction failed (a deadlock, one item's write, a payment settled by another writer): each
      // payment is finalized on its own, so one cannot fail the others.
      if (!(err instanceof GroupRaced)) this.d.log.warn({ err, payments: group.length }, "grouped finalize failed; finalizing each payment alone");
      group.forEach(alone);
      return;
    }
    // An item that lost its guarded update was settled by someone else: its own finalize returns the stored result.
    group.forEach((g, i) => (results[i] ? g.resolve(results[i]!) : alone(g)));
  }

  private finalizeInTransaction(paymentId: string, txHash: string, batchIndex: number | null, known?: KnownPayment): Promise<CallServiceResponse> {
    return runInTransaction(this.d.ds, async (m) => {
      const settledAlready = async () => {
        const p = (await this.d.store.get(paymentId, m))!;
        if (p.state === "settled" || p.state === "refunding" || p.state === "refunded") return fromJson(CallServiceResponseSchema, JSON.parse(p.responseJson!));
        throw paymentInProgress();
      };
      if (known) return (await this.settleAll(m, [{ paymentId, txHash, batchIndex, known }]))[0] ?? settledAlready();
      const won = await this.d.store.transition(paymentId, ["settling", "failed", "rejected"], "settled", { txHash, batchIndex }, m);
      if (!won) return settledAlready();
      const row = (await this.d.store.get(paymentId, m))!;
      const stored = this.withProof(fromJson(CallServiceResponseSchema, JSON.parse(row.responseJson!)), row, txHash, batchIndex);
      await this.d.store.transition(paymentId, ["settled"], "settled", { responseJson: JSON.stringify(toJson(CallServiceResponseSchema, stored)) }, m);
      await this.recordSettled(m, [{ paymentId, payment: row, stored, txHash, batchIndex }]);
      return stored;
    });
  }

  /**
   * The settling requests' path: one guarded write per payment records its settlement and final response (the
   * request knows the row). Returns each one's stored response, or undefined for one another writer settled first.
   */
  private async settleAll(m: EntityManager, items: Omit<GroupedFinalize, "resolve" | "reject">[]): Promise<(CallServiceResponse | undefined)[]> {
    const rows = items.map(({ paymentId, txHash, batchIndex, known }) => {
      const stored = this.withProof(known.response, known.payment, txHash, batchIndex);
      // The stored JSON is the settling one plus the payment proof (fromJson reads it back the same in any key order).
      const responseJson = JSON.stringify({ ...known.responseJson, paymentProof: toJson(PaymentProofSchema, stored.paymentProof!) });
      return { paymentId, payment: known.payment, stored, txHash, batchIndex, patch: { txHash, batchIndex, responseJson } };
    });
    // One statement moves them all. A lone payment another writer settled first has nothing to record here; in a
    // group, which one it was is not known here: the caller rolls back and finalizes each payment alone.
    const won = (await this.d.store.transitionMany(rows, ["settling", "failed", "rejected"], "settled", m)) === rows.length;
    if (!won && rows.length > 1) throw new GroupRaced();
    await this.recordSettled(m, won ? rows : []);
    return rows.map((r) => (won ? r.stored : undefined));
  }

  /** The response with its payment proof (a batched settlement's record is (tx hash, index): its proof is found by `{tx_hash}:{index}`). */
  private withProof(response: CallServiceResponse, p: Pick<X402PaymentEntity, "amount" | "payer">, txHash: string, batchIndex: number | null): CallServiceResponse {
    const ref = settlementRef(txHash, batchIndex);
    // A shallow copy, not clone(): nothing mutates the response's fields, and deep-copying the deliverable's Struct cost more than the rest.
    const paymentProof = create(PaymentProofSchema, { txHash, network: this.d.challengeContext.network.caip2, amount: p.amount.toString(), payer: p.payer, proofUrl: `/v1/proofs/settlement/${ref}`, batchIndex: batchIndex ?? undefined });
    return { ...response, paymentProof };
  }

  /**
   * For payments this transaction just moved to settled (so each is written exactly once): each delivered call's
   * lasting effects, then every settlement proof (kind 30120) and every ledger entry in one statement per table,
   * and the paid async jobs released.
   */
  private async recordSettled(m: EntityManager, settled: SettledRow[]): Promise<void> {
    const net = this.d.challengeContext.network;
    for (const { paymentId, payment, stored } of settled) {
      // The delivered call's lasting effects land with its settlement, never without it. An effect that
      // throws is rolled back alone and queued for retry: the mined settlement is recorded regardless.
      const handler = this.d.handlers.get(payment.skuId);
      if (handler?.commit && stored.deliverable) {
        const deliverable = stored.deliverable;
        await commitEffectOrQueue(m, paymentId, () => handler.commit!(m, deliverable, { manager: m, payer: payment.payer, paymentId, now: new Date(), proofKey: this.d.proofKey }), this.d.log);
      }
    }
    const sales = settled.map((row) => {
      const family = row.payment.skuId.split(".")[0]!;
      return { ...row, family, provider: `svc:${family}`, ...feeSplit(row.payment.amount, this.d.challengeContext.feeBps) };
    });
    await recordFreshProofs(
      m,
      this.d.proofKey,
      sales.map(({ paymentId, payment, txHash, batchIndex, family, provider, fee, payout }) => ({
        kind: PROOF_KIND.settledOutcome,
        settlementRef: settlementRef(txHash, batchIndex),
        taskClass: family,
        ts: new Date(),
        body: {
          sku_id: payment.skuId,
          payment_id: paymentId,
          network: net.caip2,
          asset: net.usdcAddress,
          payer: payment.payer,
          amount: payment.amount.toString(),
          provider,
          svc_fee_bps: this.d.challengeContext.feeBps,
          svc_fee_amount: fee.toString(),
          provider_payout_amount: payout.toString(),
          // Batched: which item of the transaction is this payment's (svc verify checks it on-chain).
          ...(batchIndex === null ? {} : { settlement_tx: txHash, batch_index: batchIndex, authorization_nonce: payment.nonce }),
        },
      })),
    );
    await postEntries(
      m,
      sales.map(({ paymentId, payment, provider, fee, payout }) => ({
        kind: "sku_sale",
        ref: paymentId,
        postings: [
          { account: ACCOUNTS.treasuryUsdc, amount: payment.amount },
          { account: ACCOUNTS.feeRevenue, amount: -fee },
          { account: ACCOUNTS.providerPayable(provider), amount: -payout },
        ],
      })),
    );
    for (const { payment } of settled) if (payment.jobId) await this.releaseJob(m, payment.jobId);
  }

  /** Retries settled payments' effects that failed at settlement (the effects outbox); returns how many landed. */
  retryEffects(): Promise<number> {
    return retryDueEffects({ ds: this.d.ds, handlers: this.d.handlers, proofKey: this.d.proofKey, log: this.d.log });
  }

  /** A paid job becomes claimable, or waits for the operator when its SKU is decided by one. */
  private async releaseJob(m: EntityManager, jobId: string): Promise<void> {
    const job = (await this.d.jobs.get(jobId, m))!;
    const handler = this.d.handlers.get(job.skuId);
    if (!handler?.awaitOperator) {
      await this.d.jobs.move(jobId, ["queued"], "pending", {}, m);
      return;
    }
    if (await this.d.jobs.move(jobId, ["queued"], "awaiting", {}, m)) await handler.awaitOperator(m, { jobId, payer: job.payer, input: JSON.parse(job.inputJson), now: new Date() });
  }

  private replay(existing: X402PaymentEntity, version: number, setHeader: (name: string, value: string) => void): CallServiceResponse {
    this.d.outcomes?.("replayed");
    const extra = existing.batchIndex === null ? undefined : { batchIndex: existing.batchIndex };
    const receipt = create(SettleResponseSchema, { success: true, transaction: existing.txHash!, network: this.d.challengeContext.network.caip2, payer: existing.payer, amount: existing.amount.toString(), extra });
    setHeader(receiptHeader(version), encodeSettleResponse(receipt));
    return fromJson(CallServiceResponseSchema, JSON.parse(existing.responseJson!));
  }
}

/** The `svc_trust` envelope of a deliverable under the call's policy manifest. */
export function trustEnvelopeProto(deliverable: JsonObject, manifest: JsonObject): TrustEnvelope {
  const t = trustEnvelope(deliverable, manifest);
  return create(TrustEnvelopeSchema, { contentSha256: t.content_sha256, contentScanned: t.content_scanned, contentFlags: t.content_flags, policyManifest: t.policy_manifest });
}

/** The outcome of `beforeChallenge`: the call is to be challenged, or it ends here unpaid (nothing to charge for). */
export type BeforeChallenge =
  | { kind: "challenge"; sku: SkuDefinition; handler: SkuHandler<any>; input: unknown; manifest: JsonObject }
  | { kind: "unpaid"; response: CallServiceResponse };

/** The outcome of checks that already ran for the call in progress (see `reusingChecks`). */
const checksDone = new AsyncLocalStorage<{ skuId: string; outcome: Promise<BeforeChallenge>; used: boolean }>();

/** The error text of the first challenge (an unpaid call). */
export const PAYMENT_REQUIRED = "Payment required";

/** The payments metric's outcome of an unpaid call's challenge (computed once, from the reason the challenge carries). */
let challengedOutcome: ReturnType<typeof outcomeOf> | undefined;

/** Response header naming why a requested comped audit was denied. */
export const COMP_DENIAL_HEADER = "svc-comp-denial";

function paymentError(code: Code, reason: string, message: string, ch: Challenge, extraHeaders: Record<string, string> = {}) {
  return rpcError(code, reason, message, {
    headers: { [X402_HEADERS.paymentRequired]: encodePaymentRequired(ch.v2), ...extraHeaders },
    details: [
      { desc: PaymentRequiredSchema, value: ch.v2 },
      { desc: PaymentRequiredSchema, value: ch.v1 },
    ],
  });
}

/** Reasons of a charge attempted and not completed (the rest are refusals before any charge). */
const FAILED_REASONS = new Set(["facilitator_unavailable", "settlement_unknown", "settlement_unrecorded", "service_failed"]);

/** The payments metric's outcome of a call that threw. */
function outcomeOf(err: unknown): ["challenged" | "refused" | "failed", string] {
  const ce = ConnectError.from(err);
  const reason = errorReason(ce) ?? (ce.code === Code.Internal || ce.code === Code.Unknown ? "internal" : Code[ce.code].toLowerCase());
  if (reason === "payment_required") return ["challenged", ""];
  // A settlement the chain refused is a failure of the charge, not a refusal at the gate.
  if (reason === "payment_failed" && ce.rawMessage.startsWith("settlement failed")) return ["failed", "settlement_failed"];
  if (FAILED_REASONS.has(reason) || reason === "internal") return ["failed", reason];
  return ["refused", reason];
}

function paymentInProgress() {
  return errors.failedPrecondition("payment_in_progress", "this payment is being processed by another request; retry shortly");
}

function facilitatorDown(err: unknown) {
  return errors.unavailable("facilitator_unavailable", `the payment facilitator is unavailable (${(err as Error).message}); nothing was charged`, err);
}

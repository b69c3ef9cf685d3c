import { createHash, timingSafeEqual } from "node:crypto";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { In, LessThan, Like, MoreThan, type DataSource } from "typeorm";
import {
  CheckComplianceResponseSchema,
  ComplianceFactorSchema,
  GetAccountResponseSchema,
  PredictResponseSchema,
  SignalSchema,
  SubmitAgentProofResponseSchema,
  SubscriptionSchema,
  type CheckComplianceRequest,
  type CreateMarketRequest,
  type GetFleetRequest,
  type GetLatestSignalsRequest,
  type GetMarketRequest,
  type JoinFleetRequest,
  type ListMarketsRequest,
  type MarketsService,
  type PredictRequest,
  type ResolveMarketRequest,
  type SubmitAgentProofRequest,
  type SubscribeRequest,
} from "../../gen/svc/markets/v1/markets_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import type { CallServiceResponse } from "../../gen/svc/payment/v1/payment_service_pb.js";
import type { EcashRedeemer, Redemption } from "../ecash/ecash-redeemer.js";
import { cashuTokenFromHeaders, ecashChallengeHeader } from "../ecash/ecash-headers.js";
import { ecashErrors } from "../ecash/ecash-errors.js";
import { EcashRedemptionEntity } from "../ecash/ecash.entity.js";
import { forUpdate } from "../platform/db/locking.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { newId } from "../platform/ids.js";
import type { Logger } from "../platform/log.js";
import { errorReason, errors, rpcError } from "../platform/rpc/errors.js";
import { JURISDICTION_HEADER } from "../policy/jurisdiction.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { AGENT_ID, type AgentStore } from "../registry/agent-store.js";
import { NOTE_PREFIX } from "../registry/credentials.js";
import type { PaymentGate } from "../x402/payment-gate.js";
import { X402_HEADERS } from "../x402/wire.js";
import { findProtocol, knownProtocols, scoreProtocol } from "./compliance.js";
import { sharesText } from "./lmsr.js";
import { checkStakeSize, checkTrading, createMarket, placeStake, resolveMarket } from "./market-book.js";
import { MarketEcashReceiptEntity, MarketEntity, MarketFleetMemberEntity, MarketPositionEntity, MarketSubscriptionEntity } from "./markets.entity.js";
import { balanceOf, bookCredit, bookPlan } from "./markets-ledger.js";
import { marketStatus, toFleetProto, toMarketProto, toPositionProto, toSubscriptionProto } from "./markets.mapper.js";
import { AgentProofOutput, ComplianceOutput, MARKETS_SKU, PlanOutput, type MarketsGrant } from "./markets-skus.js";
import { deriveSignals, RESOLVED_DAYS, WINDOW_HOURS } from "./signals.js";
import { activePlanEnd, standingOf } from "./subscriptions.js";
import { MIN_STAKE_SATS, PLAN_PERIOD_MS, PLAN_PRICE_SATS, PLANS, TIERS, type Plan, type Tier } from "./tiers.js";
import { resetTime, UsageCounter } from "./usage-counter.js";

// MarketsService: the secondary marketplace client API (spec: "Secondary marketplace client API").
// The caller is the registry agent of the `Authorization: Bearer` API key; its tier comes from the plans
// it paid for (tiers.ts). Stakes and the Contributor/Operator plans are paid in ecash (a Cashu token in
// `x-402-payment` or `x-cashu`, redeemed at the mint by the EcashRedeemer before anything is accepted)
// or from the agent's markets balance; compliance checks, the compliance plan and agent proofs are
// USD-priced and sold through the payment gate (x402). Markets are created and resolved by the
// operator (OPERATOR_API_KEY).

export const CATEGORIES = ["defi", "rwa", "macro", "crypto"] as const;
const STATUSES = ["open", "closed", "resolved"] as const;
export const DEFAULT_LIQUIDITY_B = 10_000n;
/** Prefix of the purpose of every markets redemption: `markets:<agent_id>:<what>`. */
const ECASH_PURPOSE = "markets:";
const MIN_LIQUIDITY_B = 1_000n;
const MAX_LIQUIDITY_B = 100_000_000n;

export interface MarketsDeps {
  ds: DataSource;
  agents: AgentStore;
  gate: PaymentGate;
  grant: MarketsGrant;
  /** Redeems Cashu tokens; without one, every ecash payment is refused (nothing unverified is accepted). */
  ecash?: EcashRedeemer;
  /** The allowlisted mints (CASHU_MINTS), named in the NUT-18 request of an `ecash_required` answer. */
  ecashMints?: readonly string[];
  /** Digest of OPERATOR_API_KEY; the operator routes are closed when unset. */
  operatorKeyDigest: Buffer | undefined;
  publicBaseUrl: string | undefined;
  log: Logger;
  now?: () => Date;
}

const isOutcome = (s: string): s is "yes" | "no" => s === "yes" || s === "no";

export class MarketsServiceImpl implements ServiceImpl<typeof MarketsService> {
  private readonly usage: UsageCounter;
  private readonly now: () => Date;

  constructor(private readonly d: MarketsDeps) {
    this.usage = new UsageCounter(d.ds);
    this.now = d.now ?? (() => new Date());
  }

  // ---- markets -------------------------------------------------------------------------------------

  async listMarkets(req: ListMarketsRequest, ctx: HandlerContext) {
    const status = req.status.trim().toLowerCase();
    const category = req.category.trim().toLowerCase();
    if (status && !(STATUSES as readonly string[]).includes(status)) throw errors.invalidArgument("invalid_status", `status must be one of ${STATUSES.join(", ")}`, [{ field: "status", description: "unknown status" }]);
    if (category && !(CATEGORIES as readonly string[]).includes(category)) throw errors.invalidArgument("invalid_category", `category must be one of ${CATEGORIES.join(", ")}`, [{ field: "category", description: "unknown category" }]);
    return this.metered(ctx, async (now) => {
      const where: Record<string, unknown> = {};
      if (category) where.category = category;
      if (status === "resolved") where.state = "resolved";
      else if (status) where.state = "open";
      const rows = await this.d.ds.manager.find(MarketEntity, { where, order: { createTime: "DESC", marketId: "DESC" } });
      const markets = rows.filter((m) => !status || marketStatus(m, now) === status);
      return { markets: markets.map((m) => toMarketProto(m, now)) };
    });
  }

  async getMarket(req: GetMarketRequest, ctx: HandlerContext) {
    return this.metered(ctx, async (now) => {
      const market = req.marketId ? await this.d.ds.manager.findOneBy(MarketEntity, { marketId: req.marketId }) : null;
      if (!market) throw errors.notFound("market_not_found", `no market ${req.marketId}`);
      return { market: toMarketProto(market, now) };
    });
  }

  async predict(req: PredictRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const now = this.now();
    const standing = await standingOf(this.d.ds.manager, me.agentId, now);
    if (!TIERS[standing.tier].canStake) {
      throw errors.permissionDenied("tier_required", "staking (market posting) needs the Contributor tier or above; the Explorer tier is read-only (POST /markets-api/subscriptions)");
    }
    const outcome = req.outcome.trim().toLowerCase();
    if (!isOutcome(outcome)) throw errors.invalidArgument("invalid_outcome", "outcome must be yes or no", [{ field: "outcome", description: "yes or no" }]);
    if (!req.marketId) throw errors.invalidArgument("invalid_market", "market_id is required", [{ field: "market_id", description: "required" }]);
    const token = this.ecashToken(ctx);
    if (req.payFromBalance && token) throw errors.invalidArgument("invalid_payment", "send either an ecash token or pay_from_balance, not both");
    if (req.payFromBalance) checkStakeSize(req.stakeSats);
    else if (req.stakeSats !== 0n) checkStakeSize(req.stakeSats);
    // Refuse a market that does not trade before any ecash changes hands.
    checkTrading(await this.d.ds.manager.findOneBy(MarketEntity, { marketId: req.marketId }), req.marketId, now);
    if (!req.payFromBalance && !token) {
      const least = req.stakeSats > MIN_STAKE_SATS ? req.stakeSats : MIN_STAKE_SATS;
      throw this.ecashRequired(least, `a stake of at least ${least} sats: its full value is the stake (fee 0.5 percent included)`);
    }
    return this.counted(me.agentId, standing.tier, now, async () => {
      const order = { marketId: req.marketId, agentId: me.agentId, outcome };
      const position = req.payFromBalance
        ? await runInTransaction(this.d.ds, async (m) => {
            await this.lockAgent(m, me.agentId);
            const balance = await balanceOf(m, me.agentId);
            if (balance < req.stakeSats) throw insufficientBalance(balance, req.stakeSats);
            return placeStake(m, { ...order, paid: req.stakeSats, paidWith: "balance" }, now);
          })
        : await this.withEcash(me.agentId, token!, req.stakeSats > MIN_STAKE_SATS ? req.stakeSats : MIN_STAKE_SATS, `stake on ${req.marketId} (${outcome})`, (m, r) =>
            // The time after the swap: a market that closed meanwhile refuses (and the value is credited).
            placeStake(m, { ...order, paid: r.received, paidWith: "ecash", redemption: { redemptionId: r.redemptionId, mint: r.mint } }, this.now()),
          );
      return create(PredictResponseSchema, {
        positionId: position.positionId,
        marketId: position.marketId,
        outcome: position.outcome,
        stakeSats: position.stake,
        feeSats: position.fee,
        yesProbability: position.yesProbAfter,
        yesProbabilityBefore: position.yesProbBefore,
        shares: sharesText(position.shares),
        paidWith: position.paidWith,
        redemptionId: position.redemptionId ?? "",
        paidSats: position.paid,
        createTime: timestampFromDate(position.createTime),
      });
    });
  }

  async createMarket(req: CreateMarketRequest, ctx: HandlerContext) {
    this.operator(ctx);
    const now = this.now();
    const title = req.title.trim();
    const description = req.description.trim();
    const category = req.category.trim().toLowerCase();
    if (title.length < 5 || title.length > 200) throw errors.invalidArgument("invalid_title", "title is 5 to 200 characters", [{ field: "title", description: "5 to 200 characters" }]);
    if (description.length > 2000) throw errors.invalidArgument("invalid_description", "description is at most 2000 characters", [{ field: "description", description: "too long" }]);
    if (!(CATEGORIES as readonly string[]).includes(category)) throw errors.invalidArgument("invalid_category", `category must be one of ${CATEGORIES.join(", ")}`, [{ field: "category", description: "unknown category" }]);
    const closeTime = req.closeTime ? timestampDate(req.closeTime) : undefined;
    if (!closeTime || closeTime <= now) throw errors.invalidArgument("invalid_close_time", "close_time must be in the future", [{ field: "close_time", description: "in the future" }]);
    const b = req.liquidityBSats === 0n ? DEFAULT_LIQUIDITY_B : req.liquidityBSats;
    if (b < MIN_LIQUIDITY_B || b > MAX_LIQUIDITY_B) throw errors.invalidArgument("invalid_liquidity", `liquidity_b_sats is ${MIN_LIQUIDITY_B} to ${MAX_LIQUIDITY_B}`, [{ field: "liquidity_b_sats", description: "out of bounds" }]);
    const market = await runInTransaction(this.d.ds, (m) => createMarket(m, { title, description, category, closeTime, liquidityB: b }, now));
    this.d.log.info({ marketId: market.marketId, b: b.toString() }, "market created");
    return { market: toMarketProto(market, now) };
  }

  async resolveMarket(req: ResolveMarketRequest, ctx: HandlerContext) {
    this.operator(ctx);
    const outcome = req.outcome.trim().toLowerCase();
    if (!isOutcome(outcome)) throw errors.invalidArgument("invalid_outcome", "outcome must be yes or no", [{ field: "outcome", description: "yes or no" }]);
    const now = this.now();
    const r = await runInTransaction(this.d.ds, (m) => resolveMarket(m, req.marketId, outcome, now));
    this.d.log.info({ marketId: req.marketId, outcome, payouts: r.payoutsSats.toString() }, "market resolved");
    return { market: toMarketProto(r.market, now), payoutsCount: r.payoutsCount, payoutsSats: r.payoutsSats, makerResultSats: r.makerResult };
  }

  // ---- signals -------------------------------------------------------------------------------------

  async getLatestSignals(req: GetLatestSignalsRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const now = this.now();
    const standing = await standingOf(this.d.ds.manager, me.agentId, now);
    if (!TIERS[standing.tier].signals) throw errors.permissionDenied("tier_required", "signals need the Contributor tier or above (POST /markets-api/subscriptions)");
    const category = req.category.trim().toLowerCase();
    if (category && !(CATEGORIES as readonly string[]).includes(category)) throw errors.invalidArgument("invalid_category", `category must be one of ${CATEGORIES.join(", ")}`, [{ field: "category", description: "unknown category" }]);
    const limit = req.limit <= 0 ? 20 : Math.min(req.limit, 100);
    return this.counted(me.agentId, standing.tier, now, async () => {
      const since = new Date(now.getTime() - Math.max(WINDOW_HOURS * 3600_000, RESOLVED_DAYS * 86_400_000));
      const markets = await this.d.ds.manager.find(MarketEntity, {
        where: [
          { state: "open", closeTime: MoreThan(new Date(now.getTime() - WINDOW_HOURS * 3600_000)), ...(category ? { category } : {}) },
          { state: "resolved", resolveTime: MoreThan(since), ...(category ? { category } : {}) },
        ],
      });
      const positions = new Map<string, MarketPositionEntity[]>();
      if (markets.length) {
        for (const p of await this.d.ds.manager.find(MarketPositionEntity, { where: { marketId: In(markets.map((m) => m.marketId)) } })) {
          positions.set(p.marketId, [...(positions.get(p.marketId) ?? []), p]);
        }
      }
      const signals = deriveSignals(markets, positions, now).slice(0, limit);
      return {
        windowHours: WINDOW_HOURS,
        signals: signals.map((s) =>
          create(SignalSchema, {
            signalType: s.signal_type,
            title: s.title,
            confidence: s.confidence,
            category: s.category,
            createTime: timestampFromDate(s.create_time),
            marketId: s.market_id,
            yesProbability: s.yes_probability,
            change: s.change,
            basis: s.basis,
          }),
        ),
      };
    });
  }

  // ---- compliance and proofs (USD, through the payment gate) --------------------------------------

  async checkCompliance(req: CheckComplianceRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const now = this.now();
    const name = req.protocol.trim();
    if (!name || name.length > 100) throw errors.invalidArgument("invalid_protocol", "protocol is required (a protocol name, at most 100 characters)", [{ field: "protocol", description: "required" }]);
    const facts = findProtocol(name);
    if (!facts) {
      throw errors.notFound("protocol_unknown", `${name} is not in the compliance dataset, so no score is given and nothing was charged; known protocols: ${knownProtocols().join(", ")}`);
    }
    const standing = await standingOf(this.d.ds.manager, me.agentId, now);
    if (standing.plans.has("compliance")) {
      const s = scoreProtocol(facts, now);
      return create(CheckComplianceResponseSchema, { ...complianceFields(s), billing: "monthly_plan" });
    }
    const res = await this.paid(ctx, MARKETS_SKU.complianceCheck, { agent_id: me.agentId, protocol: name });
    const s = ComplianceOutput.parse(res.deliverable);
    return create(CheckComplianceResponseSchema, { ...complianceFields(s), billing: "per_call", paymentProof: res.paymentProof });
  }

  async submitAgentProof(req: SubmitAgentProofRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const now = this.now();
    const sha = req.contentSha256.trim().toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha)) throw errors.invalidArgument("invalid_input", "content_sha256: must be 64 hex characters", [{ field: "content_sha256", description: "64 hex characters" }]);
    if (req.kind < 1 || req.kind > 65535) throw errors.invalidArgument("invalid_input", "kind: must be 1 to 65535", [{ field: "kind", description: "1 to 65535" }]);
    const label = req.label.trim();
    if (label.length > 200) throw errors.invalidArgument("invalid_input", "label: at most 200 characters", [{ field: "label", description: "too long" }]);
    const input = { agent_id: me.agentId, agent_name: me.name, declared_kind: req.kind, content_sha256: sha, label };
    // The unpaid attempt only fetches the challenge: it is not counted.
    if (!this.paymentHeader(ctx)) return this.proofResponse(await this.paid(ctx, MARKETS_SKU.agentProof, input));
    const standing = await standingOf(this.d.ds.manager, me.agentId, now);
    return this.counted(me.agentId, standing.tier, now, async () => this.proofResponse(await this.paid(ctx, MARKETS_SKU.agentProof, input)));
  }

  private proofResponse(res: CallServiceResponse) {
    const d = AgentProofOutput.parse(res.deliverable);
    return create(SubmitAgentProofResponseSchema, {
      proofId: d.proof_id,
      feeAmount: res.paymentProof?.amount ?? "",
      kind: d.kind,
      declaredKind: d.declared_kind,
      recordSha256: d.record_sha256,
      proofUrl: d.proof_url,
      paymentProof: res.paymentProof,
    });
  }

  // ---- plans and the account ---------------------------------------------------------------------

  async subscribe(req: SubscribeRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const plan = req.plan.trim().toLowerCase() as Plan;
    if (!PLANS.includes(plan)) throw errors.invalidArgument("invalid_plan", `plan must be one of ${PLANS.join(", ")}`, [{ field: "plan", description: "unknown plan" }]);
    const now = this.now();
    if (plan === "compliance") {
      if (req.payFromBalance) throw errors.invalidArgument("invalid_payment", "the compliance plan is priced in USD and paid through x402, not from the sats balance");
      const res = await this.paid(ctx, MARKETS_SKU.compliancePlan, { agent_id: me.agentId });
      const d = PlanOutput.parse(res.deliverable);
      const subscription = create(SubscriptionSchema, {
        subscriptionId: d.subscription_id,
        plan: d.plan,
        startTime: timestampFromDate(new Date(d.start_time)),
        endTime: timestampFromDate(new Date(d.end_time)),
        priceSats: 0n,
        priceAmount: d.price_amount,
        paidWith: "x402",
      });
      return { subscription, changeSats: 0n, paymentProof: res.paymentProof };
    }
    const price = PLAN_PRICE_SATS[plan];
    const token = this.ecashToken(ctx);
    if (req.payFromBalance && token) throw errors.invalidArgument("invalid_payment", "send either an ecash token or pay_from_balance, not both");
    if (!req.payFromBalance && !token) throw this.ecashRequired(price, `${price} sats for 30 days of the ${plan} plan`);
    const buy = async (m: Parameters<typeof bookPlan>[0], paid: bigint, paidWith: "ecash" | "balance", redemption?: Redemption) => {
      await this.lockAgent(m, me.agentId); // renewals of one agent apply one at a time: periods never overlap
      const end = await activePlanEnd(m, me.agentId, plan, now);
      const start = end && end > now ? end : now;
      const sub = Object.assign(new MarketSubscriptionEntity(), {
        subscriptionId: newId("sub"),
        agentId: me.agentId,
        plan,
        startTime: start,
        endTime: new Date(start.getTime() + PLAN_PERIOD_MS),
        priceSats: price,
        priceAtomic: null,
        paidWith,
        paymentId: null,
        createTime: now,
      });
      await m.insert(MarketSubscriptionEntity, sub);
      if (redemption) await m.insert(MarketEcashReceiptEntity, { redemptionId: redemption.redemptionId, agentId: me.agentId, mint: redemption.mint, amount: paid, purpose: "subscription", appliedTo: sub.subscriptionId, createTime: now });
      await bookPlan(m, sub.subscriptionId, me.agentId, paid, price, paidWith);
      return { subscription: toSubscriptionProto(sub), changeSats: paid - price };
    };
    if (req.payFromBalance) {
      return runInTransaction(this.d.ds, async (m) => {
        await this.lockAgent(m, me.agentId);
        const balance = await balanceOf(m, me.agentId);
        if (balance < price) throw insufficientBalance(balance, price);
        return buy(m, price, "balance");
      });
    }
    return this.withEcash(me.agentId, token!, price, `${plan} plan`, (m, r) => buy(m, r.received, "ecash", r));
  }

  async getAccount(_req: unknown, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const now = this.now();
    const m = this.d.ds.manager;
    const standing = await standingOf(m, me.agentId, now);
    const [subs, positions, member, calls, balance] = await Promise.all([
      m.find(MarketSubscriptionEntity, { where: { agentId: me.agentId }, order: { createTime: "DESC" }, take: 50 }),
      m.find(MarketPositionEntity, { where: { agentId: me.agentId }, order: { createTime: "DESC" }, take: 100 }),
      m.findOneBy(MarketFleetMemberEntity, { agentId: me.agentId }),
      this.usage.today(me.agentId, now),
      balanceOf(m, me.agentId),
    ]);
    return create(GetAccountResponseSchema, {
      agentId: me.agentId,
      tier: standing.tier,
      dailyLimit: TIERS[standing.tier].dailyLimit ?? 0,
      callsToday: calls,
      resetTime: timestampFromDate(resetTime(now)),
      balanceSats: balance,
      compliancePlan: standing.plans.has("compliance"),
      subscriptions: subs.map(toSubscriptionProto),
      positions: positions.map(toPositionProto),
      fleetOperator: member?.operatorAgentId ?? "",
    });
  }

  // ---- fleets ------------------------------------------------------------------------------------

  async joinFleet(req: JoinFleetRequest, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const operator = await this.d.agents.find(req.operator);
    if (!operator) throw errors.notFound("not_registered", `no registered agent ${req.operator}`);
    if (operator.agentId === me.agentId) throw errors.invalidArgument("invalid_operator", "an agent cannot join its own fleet");
    const now = this.now();
    if ((await standingOf(this.d.ds.manager, operator.agentId, now)).tier !== "operator") {
      throw errors.failedPrecondition("not_an_operator", `${operator.name} does not hold the Operator tier; only Operators list fleets`);
    }
    await runInTransaction(this.d.ds, async (m) => {
      await m.delete(MarketFleetMemberEntity, { agentId: me.agentId });
      await m.insert(MarketFleetMemberEntity, { agentId: me.agentId, operatorAgentId: operator.agentId, joinTime: now });
    });
    return { fleet: await this.fleetOf(operator, now) };
  }

  async leaveFleet(_req: unknown, ctx: HandlerContext) {
    const me = await this.d.agents.authenticate(ctx);
    const member = await this.d.ds.manager.findOneBy(MarketFleetMemberEntity, { agentId: me.agentId });
    if (member) await this.d.ds.manager.delete(MarketFleetMemberEntity, { agentId: me.agentId });
    return { operatorAgentId: member?.operatorAgentId ?? "" };
  }

  async getFleet(req: GetFleetRequest) {
    const operator = await this.d.agents.find(req.operator);
    if (!operator) throw errors.notFound("not_registered", `no registered agent ${req.operator}`);
    return { fleet: await this.fleetOf(operator, this.now()) };
  }

  private async fleetOf(operator: AgentEntity, now: Date) {
    const rows = await this.d.ds.manager.find(MarketFleetMemberEntity, { where: { operatorAgentId: operator.agentId }, order: { joinTime: "ASC", agentId: "ASC" } });
    const agents = rows.length ? await this.d.ds.manager.findBy(AgentEntity, { agentId: In(rows.map((r) => r.agentId)) }) : [];
    const byId = new Map(agents.map((a) => [a.agentId, a]));
    const active = (await standingOf(this.d.ds.manager, operator.agentId, now)).tier === "operator";
    return toFleetProto(operator, rows.map((row) => ({ row, agent: byId.get(row.agentId) ?? null })), active);
  }

  // ---- plumbing ----------------------------------------------------------------------------------

  /**
   * Runs a read that is free and open to anyone; with an API key it counts toward the agent's daily
   * limit (an invalid key is refused rather than ignored).
   */
  private async metered<T>(ctx: HandlerContext, work: (now: Date) => Promise<T>): Promise<T> {
    const now = this.now();
    if (!ctx.requestHeader.get("authorization")) return work(now);
    const me = await this.d.agents.authenticate(ctx);
    const standing = await standingOf(this.d.ds.manager, me.agentId, now);
    return this.counted(me.agentId, standing.tier, now, () => work(now));
  }

  /** Counts a call toward today's limit (429 when reached); a call that fails gives its count back. */
  private async counted<T>(agentId: string, tier: Tier, now: Date, work: () => Promise<T>): Promise<T> {
    const limit = TIERS[tier].dailyLimit;
    if (!(await this.usage.take(agentId, limit, now))) throw dailyLimitReached(tier, limit!, now);
    try {
      return await work();
    } catch (err) {
      await this.usage.giveBack(agentId, now).catch((e) => this.d.log.warn({ err: e, agentId }, "could not give a call back"));
      throw err;
    }
  }

  /**
   * Redeems the token (at least `minAmount` sats), then applies it in one transaction. If applying fails
   * after the mint swap, the ecash is already the service's: its value is credited to the agent's
   * markets balance, never lost, and the error says so.
   */
  private async withEcash<T>(agentId: string, token: string, minAmount: bigint, purpose: string, apply: (m: Parameters<typeof bookCredit>[0], r: Redemption) => Promise<T>): Promise<T> {
    if (!this.d.ecash) {
      throw ecashErrors.disabled(); // never accept a token nobody verified
    }
    // The purpose names the agent, so a redemption orphaned by a crash can still be credited (recoverOrphanedEcash).
    const redemption = await this.d.ecash.redeem({ token, minAmount, unit: "sat", purpose: `${ECASH_PURPOSE}${agentId}:${purpose}` });
    try {
      return await runInTransaction(this.d.ds, (m) => apply(m, redemption));
    } catch (err) {
      try {
        await this.credit(redemption.redemptionId, agentId, redemption.mint, redemption.received);
      } catch (creditErr) {
        this.d.log.error({ err: creditErr, redemptionId: redemption.redemptionId, agentId, received: redemption.received.toString() }, "redeemed ecash could not be applied nor credited");
        throw err;
      }
      const ce = ConnectError.from(err);
      throw rpcError(ce.code, errorReason(ce) ?? "stake_failed", `${ce.rawMessage}; the token was redeemed and the ${redemption.received} sats received were credited to your markets balance (GET /markets-api/account)`, { cause: err });
    }
  }

  /** Credits a redemption's value to the agent's markets balance, once (the receipt's key is the redemption). */
  private async credit(redemptionId: string, agentId: string, mint: string, received: bigint): Promise<boolean> {
    return runInTransaction(this.d.ds, async (m) => {
      if (await m.findOneBy(MarketEcashReceiptEntity, { redemptionId })) return false;
      await m.insert(MarketEcashReceiptEntity, { redemptionId, agentId, mint, amount: received, purpose: "credit", appliedTo: null, createTime: this.now() });
      await bookCredit(m, redemptionId, agentId, received);
      return true;
    });
  }

  /**
   * Ecash redeemed for the markets API but never applied (the server stopped between the mint swap and
   * the stake's transaction): after `graceMs`, its value is credited to the agent's markets balance.
   * Runs at start; returns how many were credited.
   */
  async recoverOrphanedEcash(graceMs = 10 * 60_000): Promise<number> {
    const cutoff = new Date(this.now().getTime() - graceMs);
    const rows = await this.d.ds.manager.find(EcashRedemptionEntity, { where: { state: "redeemed", purpose: Like(`${ECASH_PURPOSE}%`), updateTime: LessThan(cutoff) } });
    if (!rows.length) return 0;
    const applied = new Set((await this.d.ds.manager.find(MarketEcashReceiptEntity, { where: { redemptionId: In(rows.map((r) => r.redemptionId)) }, select: { redemptionId: true } })).map((r) => r.redemptionId));
    let credited = 0;
    for (const r of rows) {
      if (applied.has(r.redemptionId)) continue;
      const agentId = r.purpose.slice(ECASH_PURPOSE.length).split(":")[0] ?? "";
      if (!AGENT_ID.test(agentId)) continue;
      if (await this.credit(r.redemptionId, agentId, r.mint, r.received)) {
        credited++;
        this.d.log.warn({ redemptionId: r.redemptionId, agentId, received: r.received.toString() }, "orphaned markets ecash credited to the agent's balance");
      }
    }
    return credited;
  }

  /** A paid call of an internal SKU through the payment gate (402 challenge without a payment). */
  private async paid(ctx: HandlerContext, skuId: string, input: JsonObject): Promise<CallServiceResponse> {
    const host = ctx.requestHeader.get("host") ?? "localhost";
    ctx.responseHeader.set("cache-control", "no-store");
    const res = await this.d.gate.call(
      {
        skuId,
        input: { ...input, markets_grant: this.d.grant.value },
        paymentHeader: this.paymentHeader(ctx),
        baseUrl: this.d.publicBaseUrl ?? `http://${host}`,
        jurisdiction: ctx.requestHeader.get(JURISDICTION_HEADER) ?? undefined,
      },
      (name, value) => ctx.responseHeader.set(name, value),
    );
    if (res.status !== CallStatus.DELIVERED || !res.deliverable) throw errors.failedPrecondition("not_delivered", res.reason || `${skuId} delivered nothing; nothing was charged`);
    return res;
  }

  /** 402 `ecash_required`, with a NUT-18 payment request in `x-cashu` (NUT-24) naming the amount and the mints. */
  private ecashRequired(amount: bigint, what: string): ConnectError {
    const mints = this.d.ecash ? (this.d.ecashMints ?? []) : [];
    return rpcError(Code.FailedPrecondition, "ecash_required", `payment required: a Cashu token (unit sat, from an allowlisted mint) in the x-402-payment or x-cashu header for ${what}, or pay_from_balance`, {
      headers: mints.length ? { "x-cashu": ecashChallengeHeader(amount, mints) } : undefined,
      metadata: { amount: amount.toString(), unit: "sat", mints: mints.join(",") },
    });
  }

  private paymentHeader(ctx: HandlerContext): string | undefined {
    return ctx.requestHeader.get(X402_HEADERS.paymentSignature) ?? ctx.requestHeader.get(X402_HEADERS.xPayment) ?? undefined;
  }

  private ecashToken(ctx: HandlerContext): string | undefined {
    const token = cashuTokenFromHeaders(ctx.requestHeader);
    if (token?.startsWith(`${NOTE_PREFIX}_`)) throw errors.invalidArgument("not_ecash", "x-402-payment carries a starter-credit note; the markets API takes a Cashu token (cashuA… or cashuB…)");
    return token;
  }

  /** The agent's row, locked: spenders of one agent's markets balance apply one at a time. */
  private async lockAgent(m: Parameters<typeof bookCredit>[0], agentId: string) {
    await m.findOne(AgentEntity, { where: { agentId }, ...forUpdate(m) });
  }

  private operator(ctx: HandlerContext): void {
    if (!this.d.operatorKeyDigest) throw errors.permissionDenied("operator_api_closed", "the operator API is closed (no OPERATOR_API_KEY is set)");
    const given = /^Bearer (.+)$/.exec(ctx.requestHeader.get("authorization") ?? "")?.[1] ?? "";
    const digest = createHash("sha256").update(given).digest();
    if (!given || !timingSafeEqual(digest, this.d.operatorKeyDigest)) throw errors.authRequired("a valid operator key is required");
  }
}

function complianceFields(s: { protocol: string; name: string; risk_score: number; tail_risk_pct: number; factors: string[]; factor_details: { name: string; value: string; points: number; max_points: number }[]; data_as_of: string; sources: string[] }) {
  return {
    protocol: s.protocol,
    name: s.name,
    riskScore: s.risk_score,
    tailRiskPct: s.tail_risk_pct,
    factors: s.factors,
    factorDetails: s.factor_details.map((f) => create(ComplianceFactorSchema, { name: f.name, value: f.value, points: f.points, maxPoints: f.max_points })),
    dataAsOf: s.data_as_of,
    sources: s.sources,
  };
}

function dailyLimitReached(tier: Tier, limit: number, now: Date): ConnectError {
  const reset = resetTime(now);
  const seconds = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
  return errors.resourceExhausted(
    "daily_limit_reached",
    `the ${tier} tier allows ${limit} calls per UTC day; the count resets at ${reset.toISOString()} (in ${seconds} s); a higher tier is at POST /markets-api/subscriptions`,
    { headers: { "retry-after": String(seconds) }, metadata: { reset_time: reset.toISOString(), limit: String(limit), tier } },
  );
}


function insufficientBalance(balance: bigint, needed: bigint): ConnectError {
  return errors.failedPrecondition("insufficient_balance", `the markets balance holds ${balance} sats, less than ${needed}`);
}


import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { GetRulesResponseSchema, type GetRulesResponse } from "../../gen/svc/rules/v1/rules_service_pb.js";
import { FEE_SCHEDULE } from "../fees/fee-schedule.js";
import { BADGE_THRESHOLDS, REPUTATION_COMPONENTS, REPUTATION_REFRESH_SECONDS, REPUTATION_SOURCES, REPUTATION_TOTAL_CAP } from "../reputation/reputation-rules.js";
import { BID_SCORING_WEIGHTS } from "../marketplace/bid-scoring.js";
import { GATED_AGENT_BADGE, GOLD_GATED_INTERNAL_AGENTS } from "../marketplace/badge-gates.js";
import { WITNESS_PROGRAM } from "../witness/witness-program.js";
import { EXCLUDED_JURISDICTIONS, SERVED_JURISDICTIONS } from "../catalog/jurisdictions.js";

export const RULES_VERSION = "2026-09-26";
export const TERMS_VERSION = "2026-09-26";

/** Rule sections backed by an engine; a section whose engine does not run here is listed in `unavailable`. */
export const RULE_SECTIONS = ["fees", "reputation", "bid_scoring", "badge_gates", "witness_program"] as const;
export type RuleSection = (typeof RULE_SECTIONS)[number];

export function rulesDocument(liveSections: ReadonlySet<RuleSection>): GetRulesResponse {
  const f = FEE_SCHEDULE;
  return create(GetRulesResponseSchema, {
    rulesVersion: RULES_VERSION,
    fees: {
      mode: f.mode,
      serviceRateBps: f.serviceRateBps,
      floorBps: f.floorBps,
      ceilingBps: f.ceilingBps,
      providerBadgeAdjustmentBps: { ...f.providerBadgeAdjustmentBps },
      requesterBadgeAdjustmentBps: { ...f.requesterBadgeAdjustmentBps },
      repeatPair: f.repeatPair.map((t) => ({ ...t })),
      buyerTenureDays: f.buyerTenureDays.map((t) => ({ ...t })),
      unregisteredRequesterBps: f.unregisteredRequesterBps,
      unregisteredProviderBps: f.unregisteredProviderBps,
      firstTimePairBps: f.firstTimePairBps,
      internalIdentitiesDiscounted: f.internalIdentitiesDiscounted,
      unavailableInputRule: `if any trust input is unavailable the fee is the service rate (${f.serviceRateBps} bps)`,
      volumeDiscount: f.volumeDiscount,
      feeBearer: "provider: the fee is deducted from the provider payout; the buyer pays the listed price only",
      disclosedIn: ["402 challenge", "release response", "payout response", "public receipt"],
    },
    reputation: {
      components: REPUTATION_COMPONENTS.map((c) => ({ ...c })),
      totalCap: REPUTATION_TOTAL_CAP,
      badges: BADGE_THRESHOLDS.map((b) => ({ ...b })),
      sources: [...REPUTATION_SOURCES],
      refreshIntervalSeconds: REPUTATION_REFRESH_SECONDS,
      zeroState: "an agent with no real completed verifiable work scores 0; nothing is seeded",
    },
    bidScoring: { ...BID_SCORING_WEIGHTS, note: "advisory ranking; a buyer may accept any bid directly" },
    badgeGates: {
      goldRequiredAgents: [...GOLD_GATED_INTERNAL_AGENTS],
      requiredBadge: GATED_AGENT_BADGE,
      defaultRule: "every other agent is open to any registered agent with no badge",
    },
    witnessProgram: {
      ...WITNESS_PROGRAM,
      verdicts: [...WITNESS_PROGRAM.verdicts],
      ladder: WITNESS_PROGRAM.ladder.map((s) => ({ ...s })),
      eligibleFamilies: [...WITNESS_PROGRAM.eligibleFamilies],
      rules: [...WITNESS_PROGRAM.rules],
    },
    terms: {
      version: TERMS_VERSION,
      pricing: "the buyer pays the listed price only, read from the 402 challenge; no charge without a delivery",
      keyCustody: "the service never asks for a private key or seed phrase in any route, page or conversation",
      payouts: "provider payouts are operator-released and take minutes to hours",
      jurisdictions: [...SERVED_JURISDICTIONS],
      excludedJurisdictions: [...EXCLUDED_JURISDICTIONS],
      refunds: "a gate refusal or a failed handler is never charged; an async job that fails after settlement is refunded",
    },
    links: [
      { rel: "catalog", href: "/v1/services" },
      { rel: "skill", href: "/v1/skill.md" },
      { rel: "proofs", href: "/v1/proofs/settlements" },
      { rel: "openapi", href: "/v1/openapi.json" },
      { rel: "agent_card", href: "/.well-known/agent-card.json" },
      { rel: "health", href: "/v1/health" },
    ],
    generatedAt: timestampNow(),
    unavailable: RULE_SECTIONS.filter((s) => !liveSections.has(s)),
  });
}

import type { EntityManager } from "typeorm";
import { disputeHistory } from "../arbitration/dispute-history.js";
import { PROOF_KIND } from "../proof/proof-recorder.js";
import type { AgentEntity } from "../registry/agent.entity.js";
import { scoreOf } from "../skus/engine-score.js";
import type { ReputationOf } from "../skus/reputation-lookup.js";
import { settlementHistory } from "../skus/settlement-history.js";
import type { IdentityChain } from "../trust-evidence/identity-chain.js";
import { identityStatus } from "../trust-evidence/identity-status.js";
import { auditReportsAbout } from "../trust-evidence/rail-evidence.js";
import type { ScreenCheck } from "./screen-check.js";

// The due-diligence checks of an agent registered here, each from a ledger this service keeps (or the
// chain), with its rule:
//   registry.passport      (core) registered at least NEW_AGENT_DAYS ago: pass; newer: warn
//   identity.erc8004       (core) linked identity still held on-chain: pass; none linked / not checkable: warn;
//                                 token gone or controlled by someone else: fail
//   disputes.adjudicated   (core) disputes upheld against it (proof kind 30129): 0 pass, 1 warn, 2+ fail
//   marketplace.delivery   (core) marketplace jobs as provider, as of the reputation engine's last refresh:
//                                 none: warn; failed share >= 50%: fail; >= 20%: warn; else pass
//   reputation.badge       (info) reputation engine badge bronze or better: pass; else warn
//   settlement.payments    (info) its payout wallet's x402 payments here: no wallet or none settled: warn;
//                                 3+ rejected and more rejected than settled: fail; else pass
//   audits.reports         (info) audit reports about it on the proof rail (kind 30105): 1+ pass; none warn

export const NEW_AGENT_DAYS = 7;
const DAY_MS = 86_400_000;

export async function agentChecks(m: EntityManager, agent: AgentEntity, reputationOf: ReputationOf, chain: IdentityChain | undefined, now: Date): Promise<ScreenCheck[]> {
  const at = now.toISOString();
  const registry = { name: "svc agent registry", endpoint: `/a2a/passport/${agent.agentId}`, read_at: at };
  const rail = (kind: number) => ({ name: `proof rail (kind ${kind})`, endpoint: "/v1/proofs", read_at: at });
  const [identity, disputes, reputation, score, audits, payments] = await Promise.all([
    identityStatus(agent, chain, now),
    disputeHistory(m, [agent.agentId, agent.name, agent.evmAddress ?? undefined]),
    reputationOf(agent.agentId),
    scoreOf(agent, reputationOf),
    auditReportsAbout(m, { agentId: agent.agentId, name: agent.name, wallet: agent.evmAddress }),
    agent.evmAddress ? settlementHistory(m, agent.evmAddress) : Promise.resolve(undefined),
  ]);
  const checks: ScreenCheck[] = [];

  const ageDays = Math.floor((now.getTime() - agent.createTime.getTime()) / DAY_MS);
  checks.push({
    id: "registry.passport",
    title: "Registered passport",
    category: "registry",
    weight: "core",
    result: ageDays >= NEW_AGENT_DAYS ? "pass" : "warn",
    evidence: `${agent.agentId} (${agent.name}) registered ${agent.createTime.toISOString()}, ${ageDays} day(s) ago, tier ${agent.tier}${ageDays < NEW_AGENT_DAYS ? `: newer than ${NEW_AGENT_DAYS} days` : ""}`,
    source: registry,
  });

  const identityResult = identity.state === "verified" ? "pass" : identity.state === "controller_changed" || identity.state === "missing" ? "fail" : "warn";
  checks.push({
    id: "identity.erc8004",
    title: "ERC-8004 identity",
    category: "identity",
    weight: "core",
    result: identityResult,
    evidence: `${identity.state}: ${identity.detail}`,
    source: identity.source ?? { name: "svc agent registry (identity link)", endpoint: registry.endpoint, read_at: at },
  });

  checks.push({
    id: "disputes.adjudicated",
    title: "Adjudicated disputes",
    category: "disputes",
    weight: "core",
    result: disputes.upheld >= 2 ? "fail" : disputes.upheld === 1 ? "warn" : "pass",
    evidence: `${disputes.recorded} dispute(s) adjudicated: ${disputes.upheld} upheld against the agent, ${disputes.overturned} overturned, ${disputes.withdrawn} withdrawn`,
    source: rail(PROOF_KIND.adjudicatedOutcome),
  });

  const jobs = reputation.completedJobs + reputation.failedJobs;
  const failedShare = jobs ? reputation.failedJobs / jobs : 0;
  checks.push({
    id: "marketplace.delivery",
    title: "Marketplace delivery record",
    category: "marketplace",
    weight: "core",
    result: !jobs ? "warn" : failedShare >= 0.5 ? "fail" : failedShare >= 0.2 ? "warn" : "pass",
    evidence: jobs ? `${reputation.completedJobs} job(s) completed and ${reputation.failedJobs} failed as provider (${Math.round(failedShare * 100)}% failed)` : "no marketplace job delivered or failed as provider: no delivery record to judge",
    source: { name: "svc reputation engine (marketplace jobs as provider; refreshed every 15 minutes and after each payout)", endpoint: `/a2a/agents/${agent.agentId}/reputation`, read_at: at },
  });

  const ranked = ["bronze", "silver", "gold"].includes(score.badge);
  checks.push({
    id: "reputation.badge",
    title: "Reputation and badge",
    category: "reputation",
    weight: "informational",
    result: ranked ? "pass" : "warn",
    evidence: `score ${score.score}, badge ${score.badge}${ranked ? "" : " (below bronze: little verifiable work)"}`,
    source: { name: "svc reputation engine", endpoint: `/a2a/agents/${agent.agentId}/reputation`, read_at: at },
  });

  checks.push({
    id: "settlement.payments",
    title: "Settlement history of the payout wallet",
    category: "settlement",
    weight: "informational",
    result: !payments || payments.settled_payments === 0 ? (payments && payments.rejected_payments >= 3 ? "fail" : "warn") : payments.rejected_payments >= 3 && payments.rejected_payments > payments.settled_payments ? "fail" : "pass",
    evidence: payments
      ? `wallet ${agent.evmAddress}: ${payments.settled_payments} payment(s) settled (${payments.settled_usd} USD), ${payments.refunded_payments} refunded, ${payments.rejected_payments} rejected at verification`
      : "the agent has no payout wallet: no settlement history to read",
    source: { name: "svc x402 payments ledger", endpoint: "/v1/proofs/settlements", read_at: at },
  });

  checks.push({
    id: "audits.reports",
    title: "Audit reports on the proof rail",
    category: "audits",
    weight: "informational",
    result: audits.count > 0 ? "pass" : "warn",
    evidence: audits.count ? `${audits.count} audit report(s); newest ${audits.recent[0]!.proof_id}` : "no audit report about the agent",
    source: rail(PROOF_KIND.auditReport),
  });
  return checks;
}

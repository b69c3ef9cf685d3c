import { z } from "zod";
import { disputeHistory } from "../arbitration/dispute-history.js";
import { PROOF_KIND } from "../proof/proof-recorder.js";
import type { IdentityChain } from "../trust-evidence/identity-chain.js";
import { identityStatus, IdentityStatusSchema, publicStatus } from "../trust-evidence/identity-status.js";
import { auditReportsAbout, RailRefSchema, securityAttestationsAbout, settlementProofsOf } from "../trust-evidence/rail-evidence.js";
import { SignatureSchema, signEvidence } from "../trust-evidence/signed-evidence.js";
import { scoreOf } from "./engine-score.js";
import { AgentSubject, lookupAgent, subjectText } from "./registered-agent.js";
import type { ReputationOf } from "./reputation-lookup.js";
import type { SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";

// procurement.trust-layer: signed trust evidence about one agent registered here, each part read live
// from our own ledgers: the registry (passport), the ERC-8004 Identity Registry on-chain (the linked
// identity still held), and the proof rail (audit reports 30105, security attestations 30110, disputes
// 30129, settlement proofs 30120/30106). A subject that is not a registered passport is
// `insufficient_subject` before any charge: it never researches outside companies.

const Input = z.object({ subject: AgentSubject }).loose();
type Input = z.infer<typeof Input>;

const Recent = z.array(RailRefSchema);

export const TrustLayerOutput = z.object({
  subject: z.string(),
  matched_by: z.enum(["agent_id", "name", "erc8004_id"]),
  passport: z.object({
    status: z.enum(["verified", "registered", "identity_revoked"]),
    agent_id: z.string(),
    name: z.string(),
    tier: z.string(),
    registered_at: z.string(),
    payout_wallet: z.string().nullable(),
    capabilities: z.array(z.string()),
    passport_url: z.string(),
    onchain_identity: IdentityStatusSchema,
    source: z.object({ name: z.string(), endpoint: z.string(), read_at: z.string() }),
  }),
  reputation: z.object({ score: z.number(), badge: z.string() }),
  audit_reports: z.object({ proof_kind: z.literal(PROOF_KIND.auditReport), count: z.number(), recent: Recent }),
  security_attestations: z.object({ proof_kind: z.literal(PROOF_KIND.audit), count: z.number(), recent: Recent }),
  dispute_record: z.object({
    proof_kind: z.literal(PROOF_KIND.adjudicatedOutcome),
    recorded: z.number(),
    upheld: z.number(),
    overturned: z.number(),
    withdrawn: z.number(),
    recent: z.array(z.object({ dispute_id: z.string(), job_id: z.string(), verdict: z.string(), proof_id: z.string(), decided_at: z.string() })),
  }),
  settlement_proofs: z.object({ proof_kinds: z.array(z.number()), paid_calls: z.number(), jobs_delivered: z.number(), jobs_requested: z.number(), recent: Recent }),
  revocation_flags: z.array(z.object({ flag: z.string(), raised: z.boolean(), detail: z.string(), source: z.string() })),
  revoked: z.boolean(),
  scope: z.string(),
  generated_at: z.string(),
  signature: SignatureSchema,
});

export function procurementTrustLayer(directory: AgentDirectory, reputationOf?: ReputationOf, chain?: IdentityChain): SkuHandler<Input> {
  return {
    skuId: "procurement.trust-layer",
    poweredBy: "svc-ledger/trust-layer",
    input: Input,
    output: TrustLayerOutput,
    async precheck(input, manager) {
      const found = await lookupAgent(directory, manager, subjectText(input.subject));
      return found.agent ? undefined : `${found.reason}: procurement.trust-layer reports only on agents with a passport here and does not research outside companies`;
    },
    async run(input, ctx) {
      const subject = subjectText(input.subject);
      const found = await lookupAgent(directory, ctx.manager, subject);
      if (!found.agent) throw new Error(`${subject} no longer resolves: ${found.reason}`);
      const agent = found.agent;
      const ids = { agentId: agent.agentId, name: agent.name, wallet: agent.evmAddress };
      const [identity, audits, attestations, disputes, settlements, score] = await Promise.all([
        identityStatus(agent, chain, ctx.now),
        auditReportsAbout(ctx.manager, ids),
        securityAttestationsAbout(ctx.manager, ids),
        disputeHistory(ctx.manager, [agent.agentId, agent.name, agent.evmAddress ?? undefined]),
        settlementProofsOf(ctx.manager, ids),
        scoreOf(agent, reputationOf),
      ]);
      const flags = [
        { flag: "identity_link_revoked", raised: identity.state === "controller_changed", detail: identity.state === "controller_changed" ? identity.detail : "no change of controller recorded on-chain", source: "ERC-8004 Identity Registry (ownerOf)" },
        { flag: "identity_missing", raised: identity.state === "missing", detail: identity.state === "missing" ? identity.detail : "the linked identity exists, or none is linked", source: "ERC-8004 Identity Registry (ownerOf)" },
        { flag: "disputes_upheld", raised: disputes.upheld > 0, detail: `${disputes.upheld} dispute(s) upheld against the agent`, source: `proof rail kind ${PROOF_KIND.adjudicatedOutcome}` },
      ];
      const status = identity.state === "verified" ? "verified" : identity.state === "controller_changed" || identity.state === "missing" ? "identity_revoked" : "registered";
      const evidence = {
        subject,
        matched_by: found.matchedBy,
        passport: {
          status,
          agent_id: agent.agentId,
          name: agent.name,
          tier: agent.tier,
          registered_at: agent.createTime.toISOString(),
          payout_wallet: agent.evmAddress,
          capabilities: JSON.parse(agent.capabilitiesJson) as string[],
          passport_url: `/a2a/passport/${agent.agentId}`,
          onchain_identity: publicStatus(identity),
          source: { name: "svc agent registry", endpoint: `/a2a/passport/${agent.agentId}`, read_at: ctx.now.toISOString() },
        },
        reputation: { score: score.score, badge: score.badge },
        audit_reports: { proof_kind: PROOF_KIND.auditReport, ...audits },
        security_attestations: { proof_kind: PROOF_KIND.audit, ...attestations },
        dispute_record: { proof_kind: PROOF_KIND.adjudicatedOutcome, ...disputes },
        settlement_proofs: { proof_kinds: [PROOF_KIND.settledOutcome, PROOF_KIND.delegation], ...settlements },
        revocation_flags: flags,
        revoked: flags.some((f) => f.raised && f.flag !== "disputes_upheld"),
        scope: "agents registered with this service only, from its own ledgers and the chain; outside companies are never researched",
        generated_at: ctx.now.toISOString(),
      };
      return signEvidence(evidence, ctx.proofKey);
    },
  };
}

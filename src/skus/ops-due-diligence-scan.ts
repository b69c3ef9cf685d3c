import { z } from "zod";
import { agentChecks } from "../diligence/agent-checks.js";
import { domainChecks } from "../diligence/domain-checks.js";
import { CheckSchema, SCREEN_RULE, ScreenResult, screenResult, type ScreenCheck } from "../diligence/screen-check.js";
import { checkTarget, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import type { IdentityChain } from "../trust-evidence/identity-chain.js";
import { SignatureSchema, signEvidence } from "../trust-evidence/signed-evidence.js";
import { AgentSubject, lookupAgent, subjectText } from "./registered-agent.js";
import type { ReputationOf } from "./reputation-lookup.js";
import type { SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";
import { Iso } from "./output-shapes.js";

// ops.due-diligence-scan (async): an automated due-diligence pre-screen of a counterparty: an agent
// registered here (`subject`: name, agent_id or ERC-8004 id) and/or a company the buyer names with its
// `domain`. Documented checks (src/diligence/*), each pass / warn / fail with its evidence and source:
// registry status, ERC-8004 identity, adjudicated disputes, marketplace delivery, reputation and badge,
// settlement history, audit reports; for a domain: TLS, reachability, security.txt, A2A card. The
// overall screen is clear / review / high_risk by SCREEN_RULE. It does not research beyond what it can
// check: an agent that is not registered here, or a company given only by name, is `insufficient_subject`
// before any charge. The deliverable is signed with the proof rail's key.

const Domain = z.string().trim().min(1).max(2048);
const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/i;

const Fields = z
  .object({
    subject: AgentSubject.optional(),
    domain: Domain.optional(),
    company: z.object({ name: z.string().trim().min(1).max(200).optional(), domain: Domain.optional() }).loose().optional(),
  })
  .loose();
type Input = z.infer<typeof Fields>;

/** The origin the domain checks read: `https://<host>` for a bare host, the URL's origin otherwise. */
export function domainBase(raw: string): URL {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return new URL(new URL(raw).origin);
  if (!HOST.test(raw)) throw new Error("not a host name or URL");
  return new URL(`https://${raw}`);
}

const domainOf = (v: Input) => v.domain ?? v.company?.domain;

const SubjectOut = z.object({
  agent: z.object({ agent_id: z.string(), name: z.string(), matched_by: z.enum(["agent_id", "name", "erc8004_id"]) }).nullable(),
  company: z.object({ name: z.string().nullable(), domain: z.string().nullable() }).nullable(),
});

export const DueDiligenceOutput = z.object({
  subject: SubjectOut,
  screen_result: ScreenResult,
  rule: z.string(),
  summary: z.object({ pass: z.number().int(), warn: z.number().int(), fail: z.number().int() }),
  checks: z.array(CheckSchema),
  not_checked: z.array(z.object({ id: z.string(), reason: z.string() })),
  scope: z.string(),
  generated_at: Iso,
  signature: SignatureSchema,
});

const AGENT_CHECKS = ["registry.passport", "identity.erc8004", "disputes.adjudicated", "marketplace.delivery", "reputation.badge", "settlement.payments", "audits.reports"];
const DOMAIN_CHECKS = ["domain.tls", "domain.reachable", "domain.security_txt", "domain.a2a_card"];

export function opsDueDiligenceScan(directory: AgentDirectory, reputationOf: ReputationOf, policy: SafeFetchPolicy, chain: IdentityChain | undefined): SkuHandler<Input> {
  const input = Fields.superRefine((v, ctx) => {
    if (v.subject === undefined && v.domain === undefined && v.company === undefined) {
      ctx.addIssue({ code: "custom", path: ["subject"], message: "name the counterparty: a registered agent (subject) and/or a company (company.name with company.domain, or domain)" });
    }
    for (const [path, raw] of [[["domain"], v.domain], [["company", "domain"], v.company?.domain]] as const) {
      if (raw === undefined) continue;
      try {
        checkTarget(domainBase(raw).toString(), policy);
      } catch (err) {
        ctx.addIssue({ code: "custom", path: [...path], message: `${raw}: ${(err as Error).message}` });
      }
    }
  });
  return {
    skuId: "ops.due-diligence-scan",
    poweredBy: "svc-diligence/pre-screen",
    input,
    output: DueDiligenceOutput,
    upstreams: (v) => {
      const d = domainOf(v);
      return d ? [domainBase(d).origin] : [];
    },
    async precheck(v, manager) {
      if (v.subject !== undefined) {
        const found = await lookupAgent(directory, manager, subjectText(v.subject));
        if (!found.agent) return `${found.reason}: ops.due-diligence-scan checks agents registered here and does not research beyond what it can check`;
      }
      if (v.subject === undefined && domainOf(v) === undefined) {
        return `a company given only by name (${v.company?.name ?? "no name"}) cannot be checked: ops.due-diligence-scan does not research beyond what it can check; supply its domain, or a registered agent`;
      }
      return undefined;
    },
    async run(v, ctx) {
      const checks: ScreenCheck[] = [];
      const notChecked: { id: string; reason: string }[] = [];
      let agentOut: z.infer<typeof SubjectOut>["agent"] = null;
      if (v.subject !== undefined) {
        const found = await lookupAgent(directory, ctx.manager, subjectText(v.subject));
        if (!found.agent) throw new Error(`${subjectText(v.subject)} no longer resolves: ${found.reason}`);
        agentOut = { agent_id: found.agent.agentId, name: found.agent.name, matched_by: found.matchedBy };
        checks.push(...(await agentChecks(ctx.manager, found.agent, reputationOf, chain, ctx.now)));
      } else {
        for (const id of AGENT_CHECKS) notChecked.push({ id, reason: "no registered agent was named (subject)" });
      }
      const domain = domainOf(v);
      if (domain !== undefined) checks.push(...(await domainChecks(domainBase(domain), policy, ctx.now)));
      else for (const id of DOMAIN_CHECKS) notChecked.push({ id, reason: "no domain was supplied" });

      const count = (r: string) => checks.filter((c) => c.result === r).length;
      const evidence = {
        subject: {
          agent: agentOut,
          company: v.company !== undefined || v.domain !== undefined ? { name: v.company?.name ?? null, domain: domain ? domainBase(domain).host : null } : null,
        },
        screen_result: screenResult(checks),
        rule: SCREEN_RULE,
        summary: { pass: count("pass"), warn: count("warn"), fail: count("fail") },
        checks,
        not_checked: notChecked,
        scope:
          "An automated pre-screen from what this service can check itself: its own ledgers (registry, reputation, disputes, payments, proof rail), the ERC-8004 Identity Registry on-chain, and four requests to the supplied domain. " +
          "It does not research beyond that: no sanctions or watch lists, corporate registries, litigation, news, financial statements, ownership or people checks. A clear result is not an endorsement.",
        generated_at: ctx.now.toISOString(),
      };
      return signEvidence(evidence, ctx.proofKey);
    },
  };
}

import { getAddress } from "viem";
import { In, IsNull, Not, type EntityManager } from "typeorm";
import { z } from "zod";
import { newId } from "../platform/ids.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { INTRODUCTION_EVENT, recordIntroduction } from "../social/introduction-record.js";
import type { IdentityChain } from "../trust-evidence/identity-chain.js";
import { identityStatus, IdentityStatusSchema, publicStatus, type IdentityStatus } from "../trust-evidence/identity-status.js";
import { AgentRef, lookupAgent } from "./registered-agent.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";

// social.verified_introduction (onboarding-gated): the paying wallet's agent (the introducer) introduces
// two registered agents to each other. Before anything is recorded: the delegation chain is verified
// on-chain (the paying wallet owns, or is the agent wallet of, the ERC-8004 identity the introducer
// linked, and that identity is still owned by the wallet that signed the link), and both introduced
// agents' identities are checked (registered; a linked identity must still be held). Then, with the
// call's settlement (never without it), the introduction is recorded and both agents are notified by a
// signed webhook (`introduction.received`). An agent without a callback for that event cannot be
// notified, so the call is `insufficient_subject` before any charge.

export { INTRODUCTION_EVENT };

const Input = z
  .object({
    introducer: AgentRef.optional(),
    agents: z.array(AgentRef).length(2, "exactly two agents to introduce"),
    message: z.string().trim().min(1).max(2000),
    purpose: z.string().trim().min(1).max(200).optional(),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Party = z.object({ agent_id: z.string(), name: z.string(), payout_wallet: z.string().nullable(), passport_url: z.string(), identity: IdentityStatusSchema });
const Link = z.object({ from: z.string(), to: z.string(), relation: z.string(), verified: z.boolean(), evidence: z.string() });

export const IntroductionOutput = z.object({
  introduction_id: z.string(),
  introducer: Party,
  agents: z.array(Party.extend({ notification: z.object({ event_id: z.string(), event_type: z.literal(INTRODUCTION_EVENT), callback_host: z.string(), state: z.literal("queued") }) })),
  delegation_chain: z.array(Link),
  message: z.string(),
  purpose: z.string().nullable(),
  recorded_at: z.string(),
  sources: z.array(z.object({ name: z.string(), endpoint: z.string(), read_at: z.string() })),
});

const subscribed = (a: AgentEntity) => Boolean(a.callbackUrl) && (!a.callbackEventsJson || (JSON.parse(a.callbackEventsJson) as string[]).length === 0 || (JSON.parse(a.callbackEventsJson) as string[]).includes(INTRODUCTION_EVENT));
const controlledBy = (a: AgentEntity, payer: string) => [a.evmAddress, a.identityOwner].some((w) => w && w.toLowerCase() === payer.toLowerCase());

export function socialVerifiedIntroduction(directory: AgentDirectory, chain: IdentityChain): SkuHandler<Input> {
  async function introduced(input: Input, m: EntityManager): Promise<{ agents: AgentEntity[] } | { reason: string }> {
    const agents: AgentEntity[] = [];
    for (const ref of input.agents) {
      const found = await lookupAgent(directory, m, ref);
      if (!found.agent) return { reason: found.reason };
      agents.push(found.agent);
    }
    if (agents[0]!.agentId === agents[1]!.agentId) return { reason: `${input.agents[0]} and ${input.agents[1]} are the same agent` };
    return { agents };
  }

  /** The payer's agent that introduces: the one named, or the only linked agent the payer controls. */
  async function introducerOf(input: Input, payer: string, m: EntityManager, exclude: string[]): Promise<AgentEntity | string> {
    if (input.introducer) {
      const found = await lookupAgent(directory, m, input.introducer);
      if (!found.agent) return found.reason;
      if (!controlledBy(found.agent, payer)) return `the paying wallet ${payer} controls neither the payout wallet nor the linked identity of ${found.agent.name}`;
      if (!found.agent.identityAgentId) return `${found.agent.name} has linked no ERC-8004 identity, so no delegation chain leads from the paying wallet to it`;
      return found.agent;
    }
    const mine = (
      await m.find(AgentEntity, {
        where: [
          { evmAddress: In([payer, payer.toLowerCase()]), identityAgentId: Not(IsNull()) },
          { identityOwner: In([payer, payer.toLowerCase()]), identityAgentId: Not(IsNull()) },
        ],
        take: 10,
      })
    ).filter((a) => !exclude.includes(a.agentId));
    const unique = [...new Map(mine.map((a) => [a.agentId, a])).values()];
    if (unique.length === 1) return unique[0]!;
    return unique.length ? `the paying wallet controls several agents (${unique.map((a) => a.name).join(", ")}): name the introducer` : `the paying wallet ${payer} controls no registered agent with a linked ERC-8004 identity`;
  }

  return {
    skuId: "social.verified_introduction",
    poweredBy: "svc-registry/introductions",
    input: Input,
    output: IntroductionOutput,
    async precheck(input, m) {
      const r = await introduced(input, m);
      if ("reason" in r) return r.reason;
      if (input.introducer) {
        const intro = await lookupAgent(directory, m, input.introducer);
        if (!intro.agent) return intro.reason;
        if (r.agents.some((a) => a.agentId === intro.agent.agentId)) return `the introducer ${intro.agent.name} cannot introduce itself`;
      }
      const silent = r.agents.find((a) => !subscribed(a));
      return silent ? `${silent.name} has no webhook callback receiving ${INTRODUCTION_EVENT}, so it cannot be notified of the introduction` : undefined;
    },
    async authorize(input, payer, m) {
      const r = await introduced(input, m);
      if ("reason" in r) return r.reason;
      const intro = await introducerOf(input, payer, m, r.agents.map((a) => a.agentId));
      return typeof intro === "string" ? intro : undefined;
    },
    async run(input, ctx) {
      const r = await introduced(input, ctx.manager);
      if ("reason" in r) throw new Error(r.reason);
      const introducer = await introducerOf(input, ctx.payer, ctx.manager, r.agents.map((a) => a.agentId));
      if (typeof introducer === "string") throw new SkuRefusal("delegation_unverified", introducer);
      const payer = getAddress(ctx.payer);

      const own = await identityStatus(introducer, chain, ctx.now);
      const record = own.record;
      if (own.state !== "verified" || !record) throw new SkuRefusal("delegation_unverified", `the introducer's identity does not verify: ${own.detail}`);
      if (record.owner !== payer && record.agentWallet !== payer) {
        throw new SkuRefusal("delegation_unverified", `the paying wallet ${payer} is neither the owner (${record.owner}) nor the agent wallet (${record.agentWallet}) of ${introducer.name}'s identity`);
      }
      const statuses: IdentityStatus[] = [];
      for (const a of r.agents) {
        const s = await identityStatus(a, chain, ctx.now);
        if (s.state === "controller_changed" || s.state === "missing") throw new SkuRefusal("identity_unverified", `${a.name}'s linked identity does not verify: ${s.detail}`);
        statuses.push(s);
      }

      const token = `${chain.agentRegistry}:${introducer.identityAgentId}`;
      const introductionId = newId("intro");
      const chainLinks = [
        { from: payer, to: token, relation: "controls: owner or agent wallet of the ERC-8004 identity, read on-chain", verified: true, evidence: `ownerOf = ${record.owner}, agentWallet = ${record.agentWallet}` },
        { from: token, to: introducer.agentId, relation: "linked: the identity's owner signed an EIP-712 LinkIdentity statement for this agent", verified: true, evidence: `linked by ${introducer.identityOwner}, who still owns the token` },
        { from: introducer.agentId, to: introductionId, relation: "introduces: this call, paid by the controlling wallet", verified: true, evidence: `x402 payment ${ctx.paymentId} signed by ${payer}` },
      ];
      const party = (a: AgentEntity, s: IdentityStatus) => ({ agent_id: a.agentId, name: a.name, payout_wallet: a.evmAddress, passport_url: `/a2a/passport/${a.agentId}`, identity: publicStatus(s) });

      // Re-read now: an agent that dropped its callback since the precheck is refused before any charge.
      const events: string[] = [];
      for (const a of r.agents) {
        const current = await ctx.manager.findOneBy(AgentEntity, { agentId: a.agentId });
        if (!current || !subscribed(current)) throw new SkuRefusal("not_notifiable", `${a.name} removed its callback for ${INTRODUCTION_EVENT}: it cannot be notified`);
        events.push(newId("evt"));
      }

      return {
        introduction_id: introductionId,
        introducer: party(introducer, own),
        agents: r.agents.map((a, i) => ({
          ...party(a, statuses[i]!),
          notification: { event_id: events[i]!, event_type: INTRODUCTION_EVENT, callback_host: new URL(a.callbackUrl!).host, state: "queued" as const },
        })),
        delegation_chain: chainLinks,
        message: input.message,
        purpose: input.purpose ?? null,
        recorded_at: ctx.now.toISOString(),
        sources: [
          { name: "ERC-8004 Identity Registry", endpoint: chain.agentRegistry, read_at: ctx.now.toISOString() },
          { name: "svc agent registry", endpoint: "/a2a/passport/{agent_id}", read_at: ctx.now.toISOString() },
        ],
      };
    },
    // The notifications and the introduction row are written with the settlement, from the deliverable.
    commit: (m, deliverable, ctx) => recordIntroduction(m, IntroductionOutput.parse(deliverable), ctx.paymentId, getAddress(ctx.payer), ctx.now),
  };
}

import type { EntityManager } from "typeorm";
import { canonicalJson } from "../platform/canonical-json.js";
import { insertWebhookEvent } from "../webhooks/webhook-outbox.js";
import { IntroductionEntity } from "./introduction.entity.js";

// The lasting effects of a verified introduction, written with the settlement of the call that paid for
// it: the two `introduction.received` webhook events and the introduction row. Everything comes from
// the deliverable, whose ids (introduction and event ids) were drawn when it was computed.

export const INTRODUCTION_EVENT = "introduction.received" as const;

export interface Party {
  agent_id: string;
  name: string;
  [field: string]: unknown;
}

export interface IntroductionRecord {
  introduction_id: string;
  introducer: Party;
  agents: (Party & { notification: { event_id: string } })[];
  delegation_chain: unknown[];
  message: string;
  purpose: string | null;
  recorded_at: string;
}

/** Notifies both agents and records the introduction, in the caller's transaction. */
export async function recordIntroduction(m: EntityManager, d: IntroductionRecord, paymentId: string, payer: string, now: Date): Promise<void> {
  const [a, b] = d.agents as [IntroductionRecord["agents"][number], IntroductionRecord["agents"][number]];
  for (const [agent, other] of [[a, b], [b, a]] as const) {
    const { notification: _n, ...counterpart } = other;
    // Queued under the id the deliverable shows; the subscription was checked before the charge, so the
    // event is queued even if the agent dropped its callback since (the dispatcher records why it failed).
    await insertWebhookEvent(m, agent.notification.event_id, agent.agent_id, INTRODUCTION_EVENT, {
      introduction_id: d.introduction_id,
      introducer: { agent_id: d.introducer.agent_id, name: d.introducer.name },
      counterpart,
      message: d.message,
      purpose: d.purpose,
      delegation_chain: d.delegation_chain,
    }, now);
  }
  await m.insert(IntroductionEntity, {
    introductionId: d.introduction_id,
    paymentId,
    payer,
    introducerAgentId: d.introducer.agent_id,
    agentAId: a.agent_id,
    agentBId: b.agent_id,
    message: d.message,
    purpose: d.purpose,
    delegationJson: canonicalJson(d.delegation_chain),
    eventAId: a.notification.event_id,
    eventBId: b.notification.event_id,
    createTime: new Date(d.recorded_at),
  });
}

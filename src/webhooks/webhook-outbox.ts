import { createHmac } from "node:crypto";
import { In, LessThanOrEqual, type DataSource, type EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { anyRow, columnValue } from "../platform/db/shared-sql.js";
import type { Logger } from "../platform/log.js";
import { safePost, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { AgentEntity } from "../registry/agent.entity.js";
import type { SecretBox } from "../registry/credentials.js";
import { WebhookEventEntity } from "./webhook-event.entity.js";
import { currentRequestId, runWithRequestContext } from "../platform/request-context.js";
import { withSpan } from "../platform/tracing/tracing.js";

// Webhooks: events are written to an outbox in the caller's transaction and delivered by a dispatcher
// loop, so a slow or dead callback never blocks a request. Delivery: POST JSON with
//   svc-event-id, svc-event-type, and svc-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
// A non-2xx answer, a timeout or a refused address is retried with exponential backoff until the retry
// window (24 hours by default) has passed; then the event is `dead`. Receivers de-duplicate by event id.

export const WEBHOOK_EVENT_TYPES = ["callback.test", "wallet.updated", "key.rotated", "identity.linked", "bid.received", "job.assigned", "job.completed", "payout.released", "introduction.received"] as const;
export const SIGNATURE_HEADER = "svc-signature";

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Queues an event for the agent if it has a callback subscribed to this type. */
export async function enqueueWebhook(manager: EntityManager, agent: AgentEntity, type: (typeof WEBHOOK_EVENT_TYPES)[number], data: Record<string, unknown>): Promise<string | undefined> {
  if (!agent.callbackUrl) return undefined;
  const events = agent.callbackEventsJson ? (JSON.parse(agent.callbackEventsJson) as string[]) : [];
  if (events.length && !events.includes(type)) return undefined;
  const eventId = newId("evt");
  await insertWebhookEvent(manager, eventId, agent.agentId, type, data, new Date());
  return eventId;
}

/** Writes one event into the outbox under a given id, in the envelope every receiver gets. */
export async function insertWebhookEvent(manager: EntityManager, eventId: string, agentId: string, type: (typeof WEBHOOK_EVENT_TYPES)[number], data: Record<string, unknown>, now: Date): Promise<void> {
  await manager.insert(WebhookEventEntity, {
    eventId,
    agentId,
    eventType: type,
    payloadJson: JSON.stringify({ id: eventId, type, created: now.toISOString(), agent_id: agentId, data }),
    state: "pending",
    attempts: 0,
    nextAttemptTime: now,
    lastStatus: null,
    lastError: null,
    createTime: now,
    deliveredTime: null,
    requestId: currentRequestId() ?? null,
  });
}

export interface DispatcherOptions {
  ds: DataSource;
  box: SecretBox;
  policy: SafeFetchPolicy;
  log: Logger;
  backoffBaseMs: number;
  retryWindowMs: number;
  pollMs?: number;
  /** How long a claimed delivery may take before another dispatcher may retry it. */
  leaseMs?: number;
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(private readonly o: DispatcherOptions) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().catch((err) => this.o.log.error({ err }, "webhook dispatch failed"));
      void this.running.finally(() => this.schedule(this.o.pollMs ?? 200));
    }, ms);
  }

  private async tick(): Promise<void> {
    const now = new Date();
    // Polled every 200 ms: one cheap look first, the entity query only when something is due.
    const at = columnValue(this.o.ds, WebhookEventEntity, "nextAttemptTime", now);
    if (!(await anyRow(this.o.ds, "SELECT 1 FROM webhook_events WHERE state IN ('pending', 'delivering') AND next_attempt_time <= ? LIMIT 1", [at]))) return;
    const due = await this.o.ds.manager.find(WebhookEventEntity, {
      where: { state: In(["pending", "delivering"]), nextAttemptTime: LessThanOrEqual(now) },
      order: { nextAttemptTime: "ASC" },
      take: 20,
    });
    // Each delivery runs in the request context that caused the event (its logs carry that request id).
    await Promise.all(
      due.map((e) =>
        runWithRequestContext({ requestId: e.requestId ?? `webhook:${e.eventId}`, eventId: e.eventId }, () =>
          withSpan("webhook.deliver", { "svc.event_id": e.eventId, "svc.event_type": e.eventType }, () => this.deliver(e, now)),
        ),
      ),
    );
  }

  private async deliver(event: WebhookEventEntity, now: Date): Promise<void> {
    // The lease outlasts a delivery's deadline (5 s), so a live attempt is never claimed twice.
    const lease = new Date(now.getTime() + (this.o.leaseMs ?? 60_000));
    const claimed = await this.o.ds.manager.update(
      WebhookEventEntity,
      { eventId: event.eventId, state: event.state, nextAttemptTime: event.nextAttemptTime ?? undefined, attempts: event.attempts },
      { state: "delivering", nextAttemptTime: lease, attempts: event.attempts + 1 },
    );
    if ((claimed.affected ?? 0) !== 1) return; // another dispatcher has it
    const agent = await this.o.ds.manager.findOneBy(AgentEntity, { agentId: event.agentId });
    let status = 0;
    let error: string | null = null;
    if (!agent?.callbackUrl || !agent.callbackSecretEnc) {
      error = "the agent has no callback any more";
    } else {
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const res = await safePost(agent.callbackUrl, event.payloadJson, {
          "content-type": "application/json",
          "user-agent": "svc-webhooks/1",
          "svc-event-id": event.eventId,
          "svc-event-type": event.eventType,
          [SIGNATURE_HEADER]: signWebhook(this.o.box.open(agent.callbackSecretEnc), timestamp, event.payloadJson),
          ...(event.requestId ? { "x-request-id": event.requestId } : {}),
        }, this.o.policy);
        status = res.status;
        if (status < 200 || status >= 300) error = `HTTP ${status}`;
      } catch (err) {
        error = (err as Error).message.slice(0, 500);
      }
    }
    const attempts = event.attempts + 1;
    // Only the claim that made this attempt may record it (a slower, stale dispatcher cannot undo a delivery).
    const mine = { eventId: event.eventId, state: "delivering" as const, attempts };
    if (!error) {
      await this.o.ds.manager.update(WebhookEventEntity, mine, { state: "delivered", lastStatus: status, lastError: null, deliveredTime: new Date(), nextAttemptTime: null });
      return;
    }
    const next = new Date(Date.now() + Math.min(this.o.backoffBaseMs * 2 ** (attempts - 1), 3_600_000));
    const expired = !agent?.callbackUrl || next.getTime() > event.createTime.getTime() + this.o.retryWindowMs;
    await this.o.ds.manager.update(WebhookEventEntity, mine, { state: expired ? "dead" : "pending", lastStatus: status || null, lastError: error, nextAttemptTime: expired ? null : next });
  }
}

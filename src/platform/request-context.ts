import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

// The request id of whatever this async context is doing: an incoming request (HTTP edge or RPC), or a
// job / webhook delivery that a request caused. Log lines pick it up (pino mixin in log.ts), new job rows
// and webhook events store it, and the worker and dispatcher restore it when they run them.

export interface RequestContext {
  requestId: string;
  /** Set while a worker runs an async job. */
  jobId?: string;
  /** Set while the dispatcher delivers a webhook event. */
  eventId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** What an `x-request-id` header may look like to be honoured (else a new id is made). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` if it is sane, else a fresh UUID. */
export function requestIdFrom(header: string | string[] | null | undefined): string {
  const given = Array.isArray(header) ? header[0] : header;
  return given && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

export function runWithRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Runs `fn` (and the timers it starts) outside any request: background loops woken by a request. */
export function outsideRequestContext<T>(fn: () => T): T {
  return storage.exit(fn);
}

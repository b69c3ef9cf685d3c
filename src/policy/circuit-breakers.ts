// Per-upstream circuit breakers. An upstream (an origin such as https://api.kraken.com) that fails
// `threshold` times in a row opens its breaker: calls that need it are refused before any charge
// (409 `circuit_open`) and outbound requests to it fail fast. After `cooldownMs` one trial request is
// let through (half-open); its success closes the breaker, its failure opens it again. `CircuitBreakers`
// keeps the state in the process (one process, unit tests); servers and workers use SharedCircuitBreakers
// (shared-circuit-breakers.ts), whose state lives in the database for the whole cluster. Callers use the
// `Breakers` interface and await every method.

export interface BreakerOptions {
  threshold: number;
  cooldownMs: number;
}

export type BreakerState = "closed" | "open" | "half_open";

/** What callers need from a set of breakers (in-process or shared through the database). */
export interface Breakers {
  readonly options: BreakerOptions;
  state(urlOrName: string): BreakerState | Promise<BreakerState>;
  retryAfterMs(urlOrName: string): number | Promise<number>;
  /** Throws (or rejects with) CircuitOpenError unless a request may go out now. */
  admit(urlOrName: string): void | Promise<void>;
  release(urlOrName: string): void | Promise<void>;
  success(urlOrName: string): void | Promise<void>;
  failure(urlOrName: string): void | Promise<void>;
}

interface Breaker {
  failures: number;
  openedAt: number | undefined;
  trialInFlight: boolean;
}

export class CircuitOpenError extends Error {
  constructor(readonly upstream: string, readonly retryAfterMs: number) {
    super(`the circuit breaker for ${upstream} is open after repeated failures; retry in ${Math.ceil(retryAfterMs / 1000)} s`);
  }
}

/** The breaker key of a URL or upstream name: its origin when it parses as a URL. */
export function upstreamKey(urlOrName: string): string {
  try {
    const origin = new URL(urlOrName).origin;
    return origin === "null" ? urlOrName : origin;
  } catch {
    return urlOrName;
  }
}

export class CircuitBreakers implements Breakers {
  private readonly breakers = new Map<string, Breaker>();

  constructor(readonly options: BreakerOptions, private readonly now: () => number = Date.now) {}

  private get(key: string): Breaker {
    let b = this.breakers.get(key);
    if (!b) this.breakers.set(key, (b = { failures: 0, openedAt: undefined, trialInFlight: false }));
    return b;
  }

  state(urlOrName: string): BreakerState {
    const b = this.breakers.get(upstreamKey(urlOrName));
    if (!b || b.openedAt === undefined) return "closed";
    return this.now() - b.openedAt >= this.options.cooldownMs ? "half_open" : "open";
  }

  /** Milliseconds until an open breaker lets a trial through (0 when not open). */
  retryAfterMs(urlOrName: string): number {
    const b = this.breakers.get(upstreamKey(urlOrName));
    if (!b || b.openedAt === undefined) return 0;
    return Math.max(0, this.options.cooldownMs - (this.now() - b.openedAt));
  }

  /** Throws CircuitOpenError unless a request may go out now; a half-open breaker admits one trial. */
  admit(urlOrName: string): void {
    const key = upstreamKey(urlOrName);
    const state = this.state(key);
    if (state === "closed") return;
    const b = this.get(key);
    if (state === "half_open" && !b.trialInFlight) {
      b.trialInFlight = true;
      return;
    }
    throw new CircuitOpenError(key, this.retryAfterMs(key) || this.options.cooldownMs);
  }

  /** Ends an admitted request that says nothing about the upstream's health. */
  release(urlOrName: string): void {
    const b = this.breakers.get(upstreamKey(urlOrName));
    if (b) b.trialInFlight = false;
  }

  success(urlOrName: string): void {
    const b = this.get(upstreamKey(urlOrName));
    b.failures = 0;
    b.openedAt = undefined;
    b.trialInFlight = false;
  }

  failure(urlOrName: string): void {
    const b = this.get(upstreamKey(urlOrName));
    b.failures++;
    if (b.trialInFlight || b.failures >= this.options.threshold) b.openedAt = this.now();
    b.trialInFlight = false;
  }
}

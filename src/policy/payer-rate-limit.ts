// Per-payer rate limit of paid calls: a token bucket per paying wallet (`burst` calls at once, refilled at
// `perMinute` a minute). Over the limit the call answers 429 `rate_limited` with Retry-After, before any
// charge. This in-process limiter is for a single process (and unit tests); servers use
// SharedPayerRateLimiter (shared-rate-limit.ts), whose budget lives in the database and is shared by every
// server, so a payer spread over N servers still gets one budget. Idle buckets are dropped here so the map
// stays bounded.

export interface RateLimitOptions {
  perMinute: number;
  burst: number;
}

/** A payer rate limit: `take` answers 0 when the call may go ahead, else the milliseconds to wait. */
export interface RateLimiter {
  readonly options: RateLimitOptions;
  take(payer: string): number | Promise<number>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class PayerRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(readonly options: RateLimitOptions, private readonly now: () => number = Date.now) {}

  /** Takes one token for `payer`; returns 0 when allowed, else the milliseconds until a token is free. */
  take(payer: string): number {
    if (this.options.perMinute <= 0) return 0;
    const key = payer.toLowerCase();
    const now = this.now();
    const ratePerMs = this.options.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.options.burst, at: now };
    b.tokens = Math.min(this.options.burst, b.tokens + (now - b.at) * ratePerMs);
    b.at = now;
    this.buckets.set(key, b);
    if (this.buckets.size > 10_000) this.sweep(now, ratePerMs);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - b.tokens) / ratePerMs);
  }

  private sweep(now: number, ratePerMs: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * ratePerMs >= this.options.burst) this.buckets.delete(k);
  }
}

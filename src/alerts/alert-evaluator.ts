import { compare, div, mul, parseDecimal, ratio, sub, toDecimalString } from "../onchain-prices/exact-decimal.js";
import type { Quote } from "../market-data/venues.js";
import type { AlertCondition, AlertState } from "./price-alert.entity.js";

// One evaluation of a price alert against one venue read, in exact decimals:
//   above     fires when price >= threshold
//   below     fires when price <= threshold
//   pct-move  fires when |price - reference| / reference * 100 >= threshold (percent; the reference is
//             the price read when the alert was created)
// The data's time is the venue's own quote time when it gives one (Coinbase), else the read time. Data
// older than the alert's max age makes it `stale`; so does a failing venue once the last good data is
// older than the max age (a failing venue with recent data keeps the state). `fired` is final; `stale`
// returns to `armed` when fresh data comes back.

export type Reading =
  | { ok: true; price: string; dataTime: Date; readAt: Date; endpoint: string; venueTime: string | null }
  | { ok: false; error: string; readAt: Date };

export interface AlertRule {
  state: AlertState;
  condition: AlertCondition;
  threshold: string;
  referencePrice: string | null;
  maxAgeSeconds: number;
  /** Data time of the last good read, if any. */
  lastDataTime: Date | null;
}

export interface Evaluation {
  state: AlertState;
  note: string;
}

/** A venue quote as a reading: the data time is the venue's quote time when valid and not in the future. */
export function readingOf(quote: Quote, readAt: Date): Reading {
  const venueTime = quote.venueTime ? new Date(quote.venueTime) : null;
  const dataTime = venueTime && !Number.isNaN(venueTime.getTime()) && venueTime <= readAt ? venueTime : readAt;
  return { ok: true, price: quote.price, dataTime, readAt, endpoint: quote.endpoint, venueTime: quote.venueTime };
}

const ageSeconds = (from: Date, now: Date) => Math.max(0, Math.floor((now.getTime() - from.getTime()) / 1000));

/** Whether `price` meets the condition; with the note that explains it. */
export function conditionMet(condition: AlertCondition, threshold: string, referencePrice: string | null, price: string): { met: boolean; note: string } {
  const p = parseDecimal(price);
  const t = parseDecimal(threshold);
  if (condition === "above") {
    const met = compare(p, t) >= 0;
    return { met, note: `price ${price} is ${met ? "at or above" : "below"} the threshold ${threshold}` };
  }
  if (condition === "below") {
    const met = compare(p, t) <= 0;
    return { met, note: `price ${price} is ${met ? "at or below" : "above"} the threshold ${threshold}` };
  }
  const ref = parseDecimal(referencePrice!);
  const diff = sub(p, ref);
  const movePct = mul(div(diff.num < 0n ? ratio(-diff.num, diff.den) : diff, ref), ratio(100n));
  const met = compare(movePct, t) >= 0;
  return { met, note: `price ${price} moved ${toDecimalString(movePct, 4)}% from the reference ${referencePrice} (threshold ${threshold}%)` };
}

export function evaluate(rule: AlertRule, reading: Reading, now: Date): Evaluation {
  if (rule.state === "fired") return { state: "fired", note: "already fired" };
  if (!reading.ok) {
    const age = rule.lastDataTime ? ageSeconds(rule.lastDataTime, now) : null;
    if (age === null || age > rule.maxAgeSeconds) {
      return { state: "stale", note: `the venue is failing (${reading.error}); ${age === null ? "no data yet" : `the last data is ${age} s old`}, more than the ${rule.maxAgeSeconds} s allowed` };
    }
    return { state: rule.state, note: `the venue is failing (${reading.error}); the last data is ${age} s old, within the ${rule.maxAgeSeconds} s allowed` };
  }
  const age = ageSeconds(reading.dataTime, now);
  if (age > rule.maxAgeSeconds) return { state: "stale", note: `the data is ${age} s old, more than the ${rule.maxAgeSeconds} s allowed (price ${reading.price})` };
  const { met, note } = conditionMet(rule.condition, rule.threshold, rule.referencePrice, reading.price);
  return { state: met ? "fired" : "armed", note };
}

import type { Facilitator } from "./facilitator.js";
import type { AppMetrics } from "../platform/metrics/app-metrics.js";
import { withSpan } from "../platform/tracing/tracing.js";

// The payment gate's facilitator, observed: verify and settle each run in a span (when tracing is on),
// verification and settlement latency are histograms, and a successful settlement counts as a `settled`
// payment outcome (the gate counts the other outcomes).

export function observedFacilitator(inner: Facilitator, metrics: AppMetrics): Facilitator {
  const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;
  return {
    kind: inner.kind,
    supported: () => inner.supported(),
    verify: (payload, requirements) =>
      withSpan("x402.verify", { "svc.facilitator": inner.kind, "svc.network": requirements.network }, async (span) => {
        const started = process.hrtime.bigint();
        let result = "error";
        try {
          const verdict = await inner.verify(payload, requirements);
          result = verdict.isValid ? "valid" : "invalid";
          if (!verdict.isValid) span.setAttribute("svc.invalid_reason", verdict.invalidReason);
          return verdict;
        } finally {
          metrics.facilitatorDuration.observe({ result }, seconds(started));
        }
      }),
    settle: (payload, requirements, hooks) =>
      withSpan("x402.settle", { "svc.facilitator": inner.kind, "svc.network": requirements.network }, async (span) => {
        const started = process.hrtime.bigint();
        let result = "error";
        try {
          const settled = await inner.settle(payload, requirements, hooks);
          result = settled.success ? "success" : "failure";
          if (settled.success) {
            metrics.payment("settled");
            span.setAttribute("svc.transaction", settled.transaction);
          } else span.setAttribute("svc.error_reason", settled.errorReason);
          return settled;
        } finally {
          metrics.settlementDuration.observe({ result }, seconds(started));
        }
      }),
  };
}

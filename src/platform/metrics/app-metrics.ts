import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

// The Prometheus metrics of one app (one buildApp): its own registry, so two apps in one process (tests)
// never share or clash. Process metrics (CPU, memory, event loop, GC) are process-wide: one registry per
// process, appended to every app's exposition. Labels are bounded: route templates (never raw paths),
// RPC names from the router, outcome and reason codes from the code.

/** Request latency buckets, seconds: sub-millisecond challenge paths up to slow LLM calls. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Settlement latency buckets, seconds: a dev chain mines in milliseconds, a real one in seconds. */
const SETTLEMENT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];

export type PaymentOutcome = "settled" | "replayed" | "challenged" | "refused" | "failed" | "refunded" | "not_charged";

let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class AppMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: "svc_http_requests_total",
    help: "HTTP requests answered, by method, route template (or RPC path, or front) and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: "svc_http_request_duration_seconds",
    help: "HTTP request latency until the response finished, by method, route template and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly rpcRequests = new Counter({
    name: "svc_rpc_requests_total",
    help: "RPC executions (gRPC, gRPC-Web, Connect, and REST calls translated to RPCs), by service, method and code",
    labelNames: ["service", "method", "code"] as const,
    registers: [this.registry],
  });

  readonly rpcDuration = new Histogram({
    name: "svc_rpc_duration_seconds",
    help: "RPC execution latency, by service, method and code",
    labelNames: ["service", "method", "code"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly payments = new Counter({
    name: "svc_payments_total",
    help: "Paid-call outcomes at the payment gate: settled, replayed, challenged (402), refused (reason), failed (reason), refunded, not_charged",
    labelNames: ["outcome", "reason"] as const,
    registers: [this.registry],
  });

  readonly settlementDuration = new Histogram({
    name: "svc_settlement_duration_seconds",
    help: "Time from sending a settlement to the facilitator until its answer (mined or refused), by result",
    labelNames: ["result"] as const,
    buckets: SETTLEMENT_BUCKETS,
    registers: [this.registry],
  });

  readonly facilitatorDuration = new Histogram({
    name: "svc_facilitator_verify_duration_seconds",
    help: "Payment verification latency at the facilitator, by result",
    labelNames: ["result"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  payment(outcome: PaymentOutcome, reason = ""): void {
    this.payments.inc({ outcome, reason });
  }

  /** A gauge whose value is read when Prometheus scrapes (a cheap query or an accessor). */
  scrapeGauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: (g: Gauge<L>) => Promise<void> | void): Gauge<L> {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await read(this);
      },
    });
  }

  /** The Prometheus text exposition of this app plus the process metrics. */
  async render(): Promise<string> {
    return (await this.registry.metrics()) + (await processMetrics().metrics());
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

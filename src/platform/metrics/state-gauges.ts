import type { DataSource } from "typeorm";
import type { Logger } from "../log.js";
import { dbPoolStats } from "./db-pool.js";
import type { AppMetrics } from "./app-metrics.js";

// Gauges read at scrape time: job queue depth, webhook backlog, open circuit breakers (all in the
// database, shared by the cluster: every server reports the same numbers) and this process's DB pool.
// Each query is a GROUP BY over an indexed state column, bounded by a deadline; a query that fails or
// is late leaves the gauge at its previous values (the scrape itself never fails).

const JOB_STATES = ["queued", "pending", "awaiting", "running", "delivered", "failed", "refunding", "refunded"];
const WEBHOOK_BACKLOG_STATES = ["pending", "delivering"];
const QUERY_DEADLINE_MS = 1_000;
/** Per-upstream breaker series are kept for at most this many open breakers (upstreams can be buyer URLs). */
const MAX_BREAKER_SERIES = 100;

async function rows<T>(ds: DataSource, sql: string): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      ds.query(sql) as Promise<T[]>,
      new Promise<never>((_r, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${QUERY_DEADLINE_MS} ms`)), QUERY_DEADLINE_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerStateGauges(metrics: AppMetrics, ds: DataSource, breakerCooldownMs: number, log: Logger): void {
  const tolerant = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      log.warn({ err, what }, "metrics: scrape-time query failed");
    }
  };

  metrics.scrapeGauge("svc_jobs", "Async jobs in the queue by state (cluster-wide)", ["state"], (g) =>
    tolerant("jobs", async () => {
      const found = await rows<{ state: string; n: number | string }>(ds, "SELECT state, COUNT(*) AS n FROM service_jobs GROUP BY state");
      g.reset();
      for (const s of JOB_STATES) g.set({ state: s }, 0);
      for (const r of found) g.set({ state: r.state }, Number(r.n));
    }),
  );

  metrics.scrapeGauge("svc_webhook_backlog", "Webhook events not delivered yet (pending or being delivered), cluster-wide", ["state"], (g) =>
    tolerant("webhooks", async () => {
      const found = await rows<{ state: string; n: number | string }>(ds, "SELECT state, COUNT(*) AS n FROM webhook_events WHERE state IN ('pending', 'delivering') GROUP BY state");
      g.reset();
      for (const s of WEBHOOK_BACKLOG_STATES) g.set({ state: s }, 0);
      for (const r of found) g.set({ state: r.state }, Number(r.n));
    }),
  );

  metrics.scrapeGauge("svc_payment_effects_pending", "Settled payments whose lasting effect failed and waits for a retry (cluster-wide)", [], (g) =>
    tolerant("payment effects", async () => {
      const found = await rows<{ n: number | string }>(ds, "SELECT COUNT(*) AS n FROM x402_payment_effects");
      g.set(Number(found[0]?.n ?? 0));
    }),
  );

  // Both breaker gauges read one query per scrape: the first collector starts it, the second shares it.
  let breakerRead: { at: number; rows: Promise<{ upstream: string; opened_ms: number | string }[]> } | undefined;
  const breakerRows = () => {
    if (!breakerRead || Date.now() - breakerRead.at > QUERY_DEADLINE_MS) {
      breakerRead = { at: Date.now(), rows: rows(ds, `SELECT upstream, opened_ms FROM circuit_breakers WHERE opened_ms IS NOT NULL ORDER BY opened_ms DESC LIMIT ${MAX_BREAKER_SERIES}`) };
    }
    return breakerRead.rows;
  };
  const stateOf = (openedMs: number) => (Date.now() - openedMs >= breakerCooldownMs ? "half_open" : "open");
  metrics.scrapeGauge("svc_circuit_breakers", "Upstream circuit breakers not closed, by state (cluster-wide; upstreams without a row are closed)", ["state"], (g) =>
    tolerant("breakers", async () => {
      const found = await breakerRows();
      g.reset();
      g.set({ state: "open" }, 0);
      g.set({ state: "half_open" }, 0);
      for (const r of found) g.inc({ state: stateOf(Number(r.opened_ms)) });
    }),
  );
  metrics.scrapeGauge("svc_circuit_breaker_state", "State of each breaker that is not closed: 1 open, 0.5 half-open", ["upstream"], (g) =>
    tolerant("breaker states", async () => {
      const found = await breakerRows();
      g.reset();
      for (const r of found) g.set({ upstream: r.upstream }, stateOf(Number(r.opened_ms)) === "open" ? 1 : 0.5);
    }),
  );

  metrics.scrapeGauge("svc_db_pool_connections", "This process's database connections: total, idle, in use, and requests waiting for one (SQLite: one connection; waiting = contexts queued for the single writer)", ["state"], (g) => {
    const s = dbPoolStats(ds);
    if (!s) return;
    g.set({ state: "total" }, s.total);
    g.set({ state: "idle" }, s.idle);
    g.set({ state: "in_use" }, s.total - s.idle);
    g.set({ state: "waiting" }, s.waiting);
    g.set({ state: "limit" }, s.limit);
  });
}

import http from "node:http";

// The one HTTP load generator of `npm run bench:load`, used for every scenario: node:http with a
// keep-alive pool of `concurrency` sockets and a closed loop of `concurrency` workers, each sending its
// next request as soon as the previous answered. A run stops at `maxRequests` or after `durationMs`.

const REQUEST_TIMEOUT_MS = Number(process.env.BENCH_REQUEST_TIMEOUT_MS ?? 30_000);

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Send = (method: string, path: string, headers?: Record<string, string>, body?: string) => Promise<HttpAnswer>;

/** A keep-alive client for one origin with at most `maxSockets` connections. */
export function httpClient(origin: string, maxSockets: number): { send: Send; close(): void } {
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const send: Send = (method, path, headers = {}, body) =>
    new Promise((resolve, reject) => {
      const h: Record<string, string> = { ...headers };
      if (body !== undefined) {
        h["content-type"] ??= "application/json";
        h["content-length"] = String(Buffer.byteLength(body));
      }
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers: h, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      });
      req.on("error", reject);
      // A request still unanswered after this long counts as a stall (an error), and the run moves on.
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** One unit of work (a request or a whole flow); throws or returns an error text when it failed. */
export type Unit = (i: number, send: Send) => Promise<string | undefined>;

export interface RunResult {
  requests: number;
  errors: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Every latency in ms, sorted (rounds of one scenario are merged from these). */
  latencies: number[];
}

export async function runClosedLoop(origin: string, opts: { concurrency: number; maxRequests: number; durationMs: number }, unit: Unit): Promise<RunResult> {
  const client = httpClient(origin, opts.concurrency);
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + opts.durationMs;
  try {
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (next < opts.maxRequests && performance.now() < deadline) {
          const i = next++;
          const t = performance.now();
          let failure: string | undefined;
          try {
            failure = await unit(i, client.send);
          } catch (err) {
            failure = (err as Error).message;
          }
          latencies.push(performance.now() - t);
          if (failure !== undefined) {
            errors++;
            firstError ??= failure.slice(0, 300);
          }
        }
      }),
    );
  } finally {
    client.close();
  }
  return summarize(latencies, errors, firstError, (performance.now() - started) / 1000);
}

function summarize(latencies: number[], errors: number, firstError: string | undefined, seconds: number): RunResult {
  latencies.sort((a, b) => a - b);
  const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]! : NaN);
  return { requests: latencies.length, errors, firstError, seconds, perSecond: latencies.length / seconds, p50: q(0.5), p99: q(0.99), max: latencies.at(-1) ?? NaN, latencies };
}

/** Several runs of one scenario as one: requests, time and latencies added up. */
export function mergeRuns(runs: RunResult[]): RunResult {
  const errors = runs.reduce((s, r) => s + r.errors, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  return summarize(runs.flatMap((r) => r.latencies), errors, runs.find((r) => r.firstError)?.firstError, seconds);
}

/** A unit that expects one status from one request. */
export function expectStatus(status: number, request: (i: number, send: Send) => Promise<HttpAnswer>): Unit {
  return async (i, send) => {
    const res = await request(i, send);
    return res.status === status ? undefined : `answered ${res.status} (expected ${status}): ${res.body.slice(0, 200)}`;
  };
}

import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { privateKeyToAccount } from "viem/accounts";
import { generatePrivateKey } from "viem/accounts";
import { startChild, type Child } from "./bench/children.js";
import { expectStatus, httpClient, mergeRuns, runClosedLoop, type RunResult, type Send, type Unit } from "./bench/load-client.js";
import { decodeRequired, newBuyers, signPayments } from "./bench/buyers.js";
import { cpuMeter, watchedRoles, type Roles } from "./bench/cpu-usage.js";

// npm run bench:load: throughput and p50/p99 latency at increasing concurrency against MySQL/MariaDB
// and the dev chain (anvil), one load generator for every scenario:
//   bare-node      a bare Node HTTP server answering our challenge's bytes, captured once (the floor for the challenge path)
//   challenge      our 402 challenge of a paid SKU
//   catalog        GET /v1/services, accepting gzip as fetch does
//   paid           our paid sync calls (attestation.single-use-seal), real EIP-3009 payments settled on anvil
//   x402-express   the same paid call through @x402/express 2.27 + the x402 reference facilitator (HTTP, loopback)
//   marketplace    escrowed flows: post request -> bid -> accept -> complete -> release payout (one flow = 5 requests)
// Each server runs in its own child process; this process only generates load. Figures are printed,
// never asserted. The challenge and bare-node runs of a level alternate in BENCH_ROUNDS short rounds (A B B A ...):
// this machine's speed drifts by tens of percent within a minute, and two back-to-back runs would charge that
// drift to one side; the ratio is taken over the rounds added up, and the spread of the per-round ratios is shown.
// Settings: DATABASE_URL, BENCH_LEVELS (1,8,32,128), BENCH_SECONDS (per level, 4), BENCH_ROUNDS (4), BENCH_WARMUP (100),
// BENCH_PAID_SECONDS (8), BENCH_ONLY (scenario names), BENCH_PROFILE=1 (CPU profiles of our server and the bare one into
// BENCH_PROFILE_DIR, default $TMPDIR/svc-bench-profiles).

const DATABASE_URL = process.env.DATABASE_URL ?? "mariadb://root@127.0.0.1:3306/test";
const LEVELS = (process.env.BENCH_LEVELS ?? "1,8,32,128").split(",").map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const PAID_SECONDS = Number(process.env.BENCH_PAID_SECONDS ?? 8);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
const ONLY = process.env.BENCH_ONLY?.split(",");
/** Paid calls per side (and 20x as many challenges) before the first level; BENCH_WARMUP=0 skips it. */
const WARMUP_CALLS = Number(process.env.BENCH_WARMUP ?? 100);
/**
 * Most payments pre-signed per level: enough for the level's duration at well above the measured rates, and at
 * least 200, so a p99 is not just the slowest of a few dozen calls.
 */
const PAID_CAP = (c: number) => Math.min(1_200, Math.max(200, 40 + c * 12));
const FLOW_CAP = (c: number) => Math.min(600, 20 + c * 5);
const SKU = "attestation.single-use-seal";
const SEAL_BODY = JSON.stringify({ producer: "bench", content_sha256: "a".repeat(64) });
const OPERATOR = `bench-operator-${randomBytes(8).toString("hex")}`;
/** anvil's well-known dev keys 5 and 6: the reference facilitator's key and its payTo (never used by our server). */
const REFERENCE_FACILITATOR_KEY = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba";
const REFERENCE_PAY_TO = "0x976EA74026E726554dB657fA54763abd0C3a0aa9";

interface Row {
  scenario: string;
  concurrency: number;
  unit: string;
  r: RunResult;
  /** CPU ms per role during the run (Linux). */
  cpu: Record<string, number>;
  /** Per-round ratios to the paired scenario (challenge over bare-node), when it ran in rounds. */
  roundRatios?: number[];
}

/** The role whose CPU a scenario's server spends (the reference's is its server plus its facilitator). */
const SERVER_ROLES: Record<string, string[]> = { "bare-node": ["bare"], "x402-express": ["reference", "facilitator"] };
const serverRoles = (scenario: string) => SERVER_ROLES[scenario] ?? ["ours"];

async function withAdmin<T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const url = new URL(DATABASE_URL);
  const admin = await mysql.createConnection({ host: url.hostname, port: Number(url.port || 3306), user: decodeURIComponent(url.username || "root"), password: decodeURIComponent(url.password) });
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

const json = async (send: Send, method: string, p: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await send(method, p, headers, body === undefined ? undefined : JSON.stringify(body));
  return { status: res.status, body: JSON.parse(res.body || "{}"), headers: res.headers };
};

async function main() {
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const dbUrl = new URL(DATABASE_URL);
  dbUrl.pathname = `/${schema}`;
  await withAdmin((a) => a.query(`CREATE DATABASE \`${schema}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`));
  const children: Child<any>[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-load-"));
  const profileDir = process.env.BENCH_PROFILE_DIR ?? path.join(os.tmpdir(), "svc-bench-profiles");
  try {
    console.log(`svc bench:load on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), node ${process.version}, ${dbUrl.protocol}//${dbUrl.host}/${schema}, levels ${LEVELS.join(",")}, load average ${os.loadavg()[0]!.toFixed(2)}\n`);
    // One folder per server (ours/, bare/), so the two can be compared; each thread writes its own profile.
    const profile = (name: string) => (process.env.BENCH_PROFILE === "1" ? [`--cpu-prof`, `--cpu-prof-dir=${path.join(profileDir, name)}`] : []);
    const ours = await startChild<{ url: string; rpcUrl: string; payTo: string }>("./our-server.ts", {
      DATABASE_URL: dbUrl.toString(),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "silent",
      DEV_CHAIN_PERSIST: "false",
      DATA_DIR: dataDir,
      OPERATOR_API_KEY: OPERATOR,
    }, profile("ours"));
    children.push(ours);
    const facilitator = await startChild<{ url: string }>("./reference-facilitator.ts", { RPC_URL: ours.info.rpcUrl, FACILITATOR_KEY: REFERENCE_FACILITATOR_KEY });
    children.push(facilitator);

    const setup = httpClient(ours.info.url, 16);
    const ch = await setup.send("POST", `/v1/services/${SKU}`, {}, SEAL_BODY);
    if (ch.status !== 402) throw new Error(`challenge answered ${ch.status}: ${ch.body}`);
    const ourRequired = decodeRequired(ch.headers["payment-required"]);
    // Node writes date, connection and keep-alive itself; everything else of our answer is replayed as is.
    const replayed = Object.fromEntries(Object.entries(ch.headers).filter(([k]) => !["date", "connection", "keep-alive", "content-length"].includes(k)).map(([k, v]) => [k, String(v)]));
    const bare = await startChild<{ url: string }>("./bare-server.ts", { BARE_ANSWER: JSON.stringify({ status: ch.status, headers: replayed, body: ch.body }) }, profile("bare"));
    children.push(bare);
    const amount = BigInt(ourRequired.accepts[0]!.amount);
    const price = `$${(Number(amount) / 1e6).toFixed(6).replace(/0+$/, "").replace(/\.$/, "")}`;
    const reference = await startChild<{ url: string }>("./reference-server.ts", { FACILITATOR_URL: facilitator.info.url, PRICE: price, PAY_TO: REFERENCE_PAY_TO });
    children.push(reference);

    // Buyers: many funded keys, so per-payer rate limits (defaults kept) do not throttle the run.
    const buyers = newBuyers(Number(process.env.BENCH_BUYERS ?? 256));
    const t0 = performance.now();
    let k = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (k < buyers.length) {
          const b = buyers[k++]!;
          const r = await json(setup.send, "POST", "/v1/dev/faucet", { address: b.address, amount_usd: 20 });
          if (r.status !== 200) throw new Error(`faucet answered ${r.status}: ${JSON.stringify(r.body)}`);
        }
      }),
    );
    console.log(`funded ${buyers.length} buyers in ${((performance.now() - t0) / 1000).toFixed(1)} s; price ${price} (${amount} atomic) on both sides\n`);
    const refCh = await httpClient(reference.info.url, 1).send("POST", "/paid", {}, SEAL_BODY);
    if (refCh.status !== 402) throw new Error(`reference challenge answered ${refCh.status}: ${refCh.body}`);
    const refRequired = decodeRequired(refCh.headers["payment-required"]);

    // Marketplace parties: requesters (starter credit escrows) and providers.
    const agents = Number(process.env.BENCH_AGENTS ?? 64);
    const register = async (extra: Record<string, unknown> = {}) => {
      const r = await json(setup.send, "POST", "/v1/agents/register", { name: `bench-${randomBytes(6).toString("hex")}`, ...extra });
      if (r.status !== 201) throw new Error(`register answered ${r.status}: ${JSON.stringify(r.body)}`);
      return { name: r.body.agent.name as string, key: r.body.api_key as string, note: r.body.starter_credit.note as string };
    };
    const wantMarket = !ONLY || ONLY.includes("marketplace");
    const requesters = wantMarket ? await Promise.all(Array.from({ length: agents }, () => register())) : [];
    const providers = wantMarket ? await Promise.all(Array.from({ length: agents }, () => register({ evm_address: privateKeyToAccount(generatePrivateKey()).address }))) : [];
    setup.close();

    const rows: Row[] = [];
    const roles: Roles = watchedRoles({ ours: ours.proc.pid, bare: bare.proc.pid, reference: reference.proc.pid, facilitator: facilitator.proc.pid, client: process.pid });
    const measure = async (scenario: string, origin: string, c: number, max: number, ms: number, unit: Unit) => {
      const meter = cpuMeter(roles);
      const r = await runClosedLoop(origin, { concurrency: c, maxRequests: max, durationMs: ms }, unit);
      return { r, cpu: meter() };
    };
    const record = (row: Row) => {
      rows.push(row);
      const { scenario, concurrency: c, unit: unitName, r, cpu } = row;
      const perUnit = (ms: number) => `${((ms * 1000) / Math.max(r.requests, 1)).toFixed(0)} µs`;
      const server = serverRoles(scenario).reduce((s, role) => s + (cpu[role] ?? 0), 0);
      const others = ["client", "anvil", "db"].filter((role) => roles[role]?.length).map((role) => `${role} ${perUnit(cpu[role]!)}`);
      console.log(`  ${scenario.padEnd(13)} c=${String(c).padEnd(4)} ${r.requests} ${unitName}s, ${r.perSecond.toFixed(0)}/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(0)} ms, errors ${r.errors}${r.firstError ? ` (${r.firstError})` : ""}; CPU per ${unitName}: server ${perUnit(server)}, ${others.join(", ")}`);
    };
    const run = async (scenario: string, unitName: string, origin: string, c: number, max: number, ms: number, unit: Unit) => {
      if (ONLY && !ONLY.includes(scenario)) return;
      record({ scenario, concurrency: c, unit: unitName, ...(await measure(scenario, origin, c, max, ms, unit)) });
    };
    /** Two scenarios in alternating rounds (A B, B A, ...), each recorded as the sum of its rounds. */
    const runPaired = async (a: { scenario: string; origin: string }, b: { scenario: string; origin: string }, c: number, ms: number, unit: Unit) => {
      const wanted = [a, b].filter((x) => !ONLY || ONLY.includes(x.scenario));
      const runs = new Map<string, { r: RunResult; cpu: Record<string, number> }[]>(wanted.map((x) => [x.scenario, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const x of round % 2 === 0 ? wanted : [...wanted].reverse()) runs.get(x.scenario)!.push(await measure(x.scenario, x.origin, c, Infinity, ms / ROUNDS, unit));
      }
      const [ra, rb] = [runs.get(a.scenario), runs.get(b.scenario)];
      const ratios = ra && rb ? rb.map((x, i) => x.r.perSecond / ra[i]!.r.perSecond) : undefined;
      for (const [scenario, list] of runs) {
        const cpu: Record<string, number> = {};
        for (const { cpu: one } of list) for (const [role, v] of Object.entries(one)) cpu[role] = (cpu[role] ?? 0) + v;
        record({ scenario, concurrency: c, unit: "request", r: mergeRuns(list.map((x) => x.r)), cpu, roundRatios: scenario === b.scenario ? ratios : undefined });
      }
    };
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    // Time spent per marketplace step, to show which one bounds the flow.
    const steps = new Map<string, number>();
    const timed = async <T>(step: string, p: Promise<T>): Promise<T> => {
      const t = performance.now();
      try {
        return await p;
      } finally {
        steps.set(step, (steps.get(step) ?? 0) + performance.now() - t);
      }
    };
    const flow: Unit = async (i, send) => {
      const rq = requesters[i % requesters.length]!;
      const pv = providers[i % providers.length]!;
      const created = await timed("request", json(send, "POST", "/a2a/requests", { capability_id: "research", task_description: "summarize the x402 spec", budget_usd: 0.01, tags: ["bench"] }, { ...bearer(rq.key), "x-402-payment": rq.note }));
      if (created.status !== 201) return `post request ${created.status}: ${JSON.stringify(created.body)}`;
      const bid = await timed("bid", json(send, "POST", `/a2a/requests/${created.body.request_id}/bids`, { capability_id: "research", agent_name: pv.name, display_name: `${pv.name} offer`, price_usd: 0.01, eta_seconds: 60 }, bearer(pv.key)));
      if (bid.status !== 201) return `bid ${bid.status}: ${JSON.stringify(bid.body)}`;
      const accepted = await timed("accept", json(send, "POST", `/a2a/bids/${bid.body.bid_id}/accept`, {}, bearer(rq.key)));
      if (accepted.status !== 200) return `accept ${accepted.status}: ${JSON.stringify(accepted.body)}`;
      const done = await timed("complete", json(send, "POST", `/a2a/jobs/${accepted.body.job_id}/complete`, { result_summary: "the spec in 5 bullets" }, bearer(pv.key)));
      if (done.status !== 200) return `complete ${done.status}: ${JSON.stringify(done.body)}`;
      const released = await timed("release", json(send, "POST", `/v1/admin/payouts/${done.body.payout.payout_id}/release`, {}, bearer(OPERATOR)));
      if (released.status !== 200) return `release ${released.status}: ${JSON.stringify(released.body)}`;
      return undefined;
    };

    let signedOffset = 0;
    // Warm-up, not counted: both sides' paid paths and our 402 run WARMUP_CALLS times first, so the first
    // level measures the servers, not V8 compiling them (the reference gets the same).
    if (WARMUP_CALLS > 0) {
      const warm = async (origin: string, path: string, required: typeof ourRequired) => {
        const payments = signPayments(buyers, required, WARMUP_CALLS, signedOffset);
        const r = await runClosedLoop(origin, { concurrency: 4, maxRequests: WARMUP_CALLS, durationMs: 60_000 }, expectStatus(200, (i, send) => send("POST", path, { "payment-signature": payments[i]! }, SEAL_BODY)));
        return `${r.requests} calls, ${r.errors} errors`;
      };
      const challenges = await runClosedLoop(ours.info.url, { concurrency: 4, maxRequests: WARMUP_CALLS * 20, durationMs: 60_000 }, expectStatus(402, (_i, send) => send("POST", `/v1/services/${SKU}`, {}, SEAL_BODY)));
      const paid = await warm(ours.info.url, `/v1/services/${SKU}`, ourRequired);
      const ref = await warm(reference.info.url, "/paid", refRequired);
      signedOffset += WARMUP_CALLS;
      console.log(`warm-up (not counted): ${challenges.requests} challenges; paid ${paid}; x402-express ${ref}\n`);
    }
    for (const c of LEVELS) {
      console.log(`concurrency ${c}`);
      const ms = SECONDS * 1000;
      await runPaired({ scenario: "bare-node", origin: bare.info.url }, { scenario: "challenge", origin: ours.info.url }, c, ms, expectStatus(402, (_i, send) => send("POST", `/v1/services/${SKU}`, {}, SEAL_BODY)));
      // As fetch (undici) asks for it: the catalog comes gzipped (its ~190 KB of JSON Schemas, compressed once per version).
      await run("catalog", "request", ours.info.url, c, Infinity, ms, expectStatus(200, (_i, send) => send("GET", "/v1/services", { "accept-encoding": "gzip, deflate" })));
      const n = PAID_CAP(c);
      const ourPayments = signPayments(buyers, ourRequired, n, signedOffset);
      const refPayments = signPayments(buyers, refRequired, n, signedOffset);
      signedOffset += n;
      await run("paid", "call", ours.info.url, c, n, PAID_SECONDS * 1000, expectStatus(200, (i, send) => send("POST", `/v1/services/${SKU}`, { "payment-signature": ourPayments[i]! }, SEAL_BODY)));
      await run("x402-express", "call", reference.info.url, c, n, PAID_SECONDS * 1000, expectStatus(200, (i, send) => send("POST", "/paid", { "payment-signature": refPayments[i]! }, SEAL_BODY)));
      steps.clear();
      await run("marketplace", "flow", ours.info.url, c, FLOW_CAP(c), PAID_SECONDS * 1000, flow);
      const flows = rows.at(-1)?.scenario === "marketplace" ? rows.at(-1)!.r.requests : 0;
      if (flows) console.log(`    per step, mean ms: ${[...steps].map(([k, ms]) => `${k} ${(ms / flows).toFixed(0)}`).join(", ")}`);
    }

    printTable(rows);
  } finally {
    for (const child of children.reverse()) await child.stop();
    await withAdmin((a) => a.query(`DROP DATABASE IF EXISTS \`${schema}\``));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function printTable(rows: Row[]) {
  const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "-");
  console.log("\n| scenario | concurrency | requests | throughput /s | p50 ms | p99 ms | max ms | errors | server CPU µs per unit |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const { scenario, concurrency, unit, r, cpu } of rows) {
    const server = serverRoles(scenario).reduce((s, role) => s + (cpu[role] ?? 0), 0);
    console.log(`| ${scenario}${unit === "flow" ? " (flows of 5 requests)" : ""} | ${concurrency} | ${r.requests} | ${f(r.perSecond)} | ${f(r.p50, 1)} | ${f(r.p99, 1)} | ${f(r.max)} | ${r.errors} | ${f((server * 1000) / Math.max(r.requests, 1))} |`);
  }
  const at = (s: string, c: number) => rows.find((x) => x.scenario === s && x.concurrency === c)?.r;
  console.log("\n| concurrency | paid throughput ours / reference | our paid p99 vs reference p50 | challenge / bare Node throughput |");
  console.log("|---|---|---|---|");
  for (const c of LEVELS) {
    const ours = at("paid", c), ref = at("x402-express", c), ch = at("challenge", c), bare = at("bare-node", c);
    const ratio = ours && ref ? `${(ours.perSecond / ref.perSecond).toFixed(2)}x` : "-";
    const lat = ours && ref ? `${f(ours.p99, 1)} vs ${f(ref.p50, 1)} ms (${ours.p99 < ref.p50 ? "below" : "not below"})` : "-";
    const spread = rows.find((x) => x.scenario === "challenge" && x.concurrency === c)?.roundRatios;
    const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
    const chr = ch && bare ? `${pct(ch.perSecond / bare.perSecond)}${spread && spread.length > 1 ? ` (rounds ${pct(Math.min(...spread))}-${pct(Math.max(...spread))})` : ""}` : "-";
    console.log(`| ${c} | ${ratio} | ${lat} | ${chr} |`);
  }
  // A stall is a request left unanswered (the client gives up after BENCH_REQUEST_TIMEOUT_MS, 30 s) or a failed one.
  const stalls = rows.filter((x) => x.r.errors > 0);
  console.log(stalls.length ? `\nerrors or stalls: ${stalls.map((x) => `${x.scenario}@${x.concurrency}: ${x.r.firstError}`).join("; ")}` : "\nno stall: every request answered as expected");
  console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")} (figures are only comparable within one run)`);
}

await main();

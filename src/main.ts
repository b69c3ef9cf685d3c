import fs, { readFileSync } from "node:fs";
import { loadConfig, ConfigError, type Config } from "./config.js";
import { createLogger } from "./platform/log.js";
import { configuredSecrets } from "./platform/secrets.js";
import { openDataSource, runMigrations, schemaDrift } from "./platform/db/data-source.js";
import { loadCatalog, CatalogConfigError } from "./catalog/catalog-config.js";
import { buildApp } from "./server.js";
import { listenOnePort } from "./platform/http/one-port-server.js";
import { publicClientFor, startChain, viemChain } from "./chain/chain-runtime.js";
import { verifyProof } from "./proof/verify-proof.js";
import { checkBooks } from "./ledger/books-check.js";

// CLI and composition root: `svc serve | worker | migrate | check-schema | ledger | payouts | disputes | verify | help`.

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

const USAGE = `usage: svc <command>

  serve          run migrations, then serve gRPC, Connect and REST on one port (PORT, default 8402)
  worker         run async job workers only (WORKER_CONCURRENCY each, at least 1) against the same database;
                 on the embedded dev chain it joins the chain of the server at SVC_URL
  migrate        run pending database migrations and exit
  check-schema   exit 1 if the entities and the migrated schema differ (prints the SQL that would fix it)
  ledger check   exit 1 unless the journal balances and agrees with notes, escrows, jobs and payouts
  payouts list [pending|released]   list payouts (asks the running server: SVC_URL, OPERATOR_API_KEY)
  payouts release <payout_id>       release a payout (the same)
  disputes list [open|decided]      list disputes (the same)
  disputes decide <dispute_id> <upheld|overturned|withdrawn> <rationale…>   the operator panel's verdict (the same)
  verify <proof.json | tx_hash | proof_id>
                 check a proof like a third party: hash, Ed25519 signature, Merkle inclusion, on-chain anchor
                 (and the settlement transfer); the key comes from SVC_URL/v1/proofs/keys or PROOF_PUBLIC_KEY,
                 the chain from CHAIN_RPC_URL or the dev chain of SVC_URL; exit 0 all pass, 1 a check failed,
                 3 not anchored yet
  help           this text

Settings come from the environment; see README.md.`;

async function serve(config: Config): Promise<void> {
  const log = createLogger(config.logLevel, configuredSecrets(config));
  log.debug({ config }, "effective settings (secrets redacted)");
  const tracing = config.otelTracing ? (await import("./platform/tracing/tracing-setup.js")).startTracing({ enabled: true }) : undefined;
  const skus = loadCatalog(config.catalogFile);
  const ds = await openDataSource(config.database);
  const applied = await runMigrations(ds);
  if (applied.length) log.info({ applied }, "migrations applied");
  const chain = await startChain(config, log, config.devChainJoinUrl);
  const app = buildApp({ config, log, ds, skus, version: VERSION, chain });
  await app.start();
  const server = await listenOnePort(app.handler, config.port, config.host, config.http);
  log.info(
    { url: server.url, database: config.database.kind, network: config.network.caip2, devChain: chain.dev ? chain.rpcUrl : false, payTo: chain.treasury },
    "svc listening (HTTP/1.1 + h2c: REST, Connect, gRPC, gRPC-Web)",
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    await server.close(config.shutdownGraceMs);
    await app.stop();
    await chain.close();
    await ds.destroy();
    await tracing?.shutdown();
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

/** A worker process: claims async jobs from the shared queue (FOR UPDATE SKIP LOCKED on MySQL) and runs them. */
async function worker(config: Config): Promise<void> {
  const log = createLogger(config.logLevel, configuredSecrets(config));
  const tracing = config.otelTracing ? (await import("./platform/tracing/tracing-setup.js")).startTracing({ enabled: true }) : undefined;
  const skus = loadCatalog(config.catalogFile);
  const ds = await openDataSource(config.database);
  const drift = await schemaDrift(ds);
  if (drift.length) {
    await ds.destroy();
    throw new Error("the database schema is not current: run `svc migrate` (or start a server) before starting workers");
  }
  const base = (process.env.SVC_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, "");
  const devRpc = !config.devChain
    ? undefined
    : (config.devChainJoinUrl ?? ((await (await fetch(`${base}/v1/health`)).json()) as { chain?: { rpc_url?: string } }).chain?.rpc_url);
  if (config.devChain && !devRpc) throw new Error(`the server at ${base} does not report a dev chain to join; set SVC_URL or CHAIN_RPC_URL`);
  const chain = await startChain(config, log, devRpc);
  const app = buildApp({ config: { ...config, workerConcurrency: Math.max(1, config.workerConcurrency) }, log, ds, skus, version: VERSION, chain });
  app.startWorkers();
  log.info({ database: config.database.kind, concurrency: Math.max(1, config.workerConcurrency), chain: chain.rpcUrl }, "svc worker running");
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "worker shutting down: finishing jobs in hand");
    await app.stop();
    await chain.close();
    await ds.destroy();
    await tracing?.shutdown();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

async function migrate(config: Config): Promise<void> {
  const ds = await openDataSource(config.database);
  try {
    const applied = await runMigrations(ds);
    console.log(applied.length ? `applied: ${applied.join(", ")}` : "no pending migrations");
  } finally {
    await ds.destroy();
  }
}

async function checkSchema(config: Config): Promise<number> {
  const ds = await openDataSource(config.database);
  try {
    const drift = await schemaDrift(ds);
    if (!drift.length) {
      console.log("schema matches the entities");
      return 0;
    }
    console.log(`schema drift (${drift.length} statements):\n${drift.join(";\n")}`);
    return 1;
  } finally {
    await ds.destroy();
  }
}

async function ledgerCheck(config: Config): Promise<number> {
  const ds = await openDataSource(config.database);
  try {
    const problems = await checkBooks(ds.manager);
    console.log(problems.length ? `ledger check FAILED:\n${problems.join("\n")}` : "ledger check: the journal balances and agrees with notes, escrows, jobs and payouts");
    return problems.length ? 1 : 0;
  } finally {
    await ds.destroy();
  }
}

/** Operator commands go through the running server's operator routes (it holds the chain and the keys). */
async function operatorCall(config: Config, path: string, body?: unknown): Promise<number> {
  const base = (process.env.SVC_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${config.operatorApiKey ?? ""}`, "content-type": "application/json" };
  const res = await fetch(`${base}${path}`, body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) });
  console.log(JSON.stringify(await res.json(), null, 2));
  return res.ok ? 0 : 1;
}

function payouts(config: Config, args: string[]): Promise<number> {
  if (args[0] === "release" && args[1]) return operatorCall(config, `/v1/admin/payouts/${encodeURIComponent(args[1])}/release`, {});
  if (args[0] === "list") return operatorCall(config, `/v1/admin/payouts${args[1] ? `?state=${encodeURIComponent(args[1])}` : ""}`);
  console.error(USAGE);
  return Promise.resolve(2);
}

function disputes(config: Config, args: string[]): Promise<number> {
  if (args[0] === "decide" && args[1] && args[2] && args.length > 3) {
    return operatorCall(config, `/v1/admin/disputes/${encodeURIComponent(args[1])}/decide`, { verdict: args[2], rationale: args.slice(3).join(" ") });
  }
  if (args[0] === "list") return operatorCall(config, `/v1/admin/disputes${args[1] ? `?state=${encodeURIComponent(args[1])}` : ""}`);
  console.error(USAGE);
  return Promise.resolve(2);
}

async function verify(config: Config, target: string | undefined): Promise<number> {
  if (!target) {
    console.error(USAGE);
    return 2;
  }
  const base = (process.env.SVC_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, "");
  const getJson = async (path: string) => (await (await fetch(`${base}${path}`)).json()) as Record<string, any>;
  const proof = fs.existsSync(target)
    ? JSON.parse(fs.readFileSync(target, "utf8")).proof ?? JSON.parse(fs.readFileSync(target, "utf8"))
    : (await getJson(/^0x[0-9a-fA-F]{64}(:\d+)?$/.test(target) ? `/v1/proofs/settlement/${target}` : `/v1/proofs/${encodeURIComponent(target)}`)).proof;
  if (!proof) throw new Error(`no proof found for ${target}`);
  const keys = process.env.PROOF_PUBLIC_KEY ? { ed25519_public_keys: [process.env.PROOF_PUBLIC_KEY], anchor_address: process.env.PROOF_ANCHOR_ADDRESS } : await getJson("/v1/proofs/keys");
  const rpc = config.chainRpcUrl ?? (await getJson("/v1/health")).chain?.rpc_url;
  if (!rpc) throw new Error("no chain to read: set CHAIN_RPC_URL");
  const client = publicClientFor(viemChain(config.network, rpc), rpc, false);
  const checks = await verifyProof(proof, keys.ed25519_public_keys[0], keys.anchor_address || undefined, client);
  for (const c of checks) console.log(`${c.outcome.toUpperCase().padEnd(7)} ${c.name.padEnd(10)} ${c.detail}`);
  if (checks.some((c) => c.outcome === "fail")) return 1;
  return checks.some((c) => c.outcome === "pending") ? 3 : 0;
}

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? "help";
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return 0;
  }
  const config = loadConfig();
  switch (command) {
    case "serve":
      await serve(config);
      return -1; // keeps running
    case "worker":
      await worker(config);
      return -1; // keeps running
    case "migrate":
      await migrate(config);
      return 0;
    case "check-schema":
      return checkSchema(config);
    case "ledger":
      if (argv[1] !== "check") break;
      return ledgerCheck(config);
    case "payouts":
      return payouts(config, argv.slice(1));
    case "disputes":
      return disputes(config, argv.slice(1));
    case "verify":
      return verify(config, argv[1]);
  }
  console.error(`unknown command: ${argv.join(" ")}\n\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    const known = err instanceof ConfigError || err instanceof CatalogConfigError;
    console.error(known ? (err as Error).message : err);
    process.exit(1);
  },
);

import { readFileSync } from "node:fs";
import { loadConfig, ConfigError, type Config } from "./config.js";
import { createLogger } from "./platform/log.js";
import { openDataSource, runMigrations, schemaDrift } from "./platform/db/data-source.js";
import { loadCatalog, CatalogConfigError } from "./catalog/catalog-config.js";
import { buildApp } from "./server.js";
import { listenOnePort } from "./platform/http/one-port-server.js";
import { startChain } from "./chain/chain-runtime.js";
import { checkBooks } from "./ledger/books-check.js";

// CLI and composition root: `svc serve | migrate | check-schema | help`.

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

const USAGE = `usage: svc <command>

  serve          run migrations, then serve gRPC, Connect and REST on one port (PORT, default 8402)
  migrate        run pending database migrations and exit
  check-schema   exit 1 if the entities and the migrated schema differ (prints the SQL that would fix it)
  ledger check   exit 1 unless the journal balances and agrees with notes, escrows, jobs and payouts
  payouts list [pending|released]   list payouts (asks the running server: SVC_URL, OPERATOR_API_KEY)
  payouts release <payout_id>       release a payout (the same)
  help           this text

Settings come from the environment; see README.md.`;

async function serve(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const skus = loadCatalog(config.catalogFile);
  const ds = await openDataSource(config.database);
  const applied = await runMigrations(ds);
  if (applied.length) log.info({ applied }, "migrations applied");
  const chain = await startChain(config, log);
  const app = buildApp({ config, log, ds, skus, version: VERSION, chain });
  await app.start();
  const server = await listenOnePort(app.handler, config.port, config.host);
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
    log.info("stopped");
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

/** Payout commands go through the running server's operator routes (it holds the chain and the keys). */
async function payouts(config: Config, args: string[]): Promise<number> {
  const base = (process.env.SVC_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${config.operatorApiKey ?? ""}`, "content-type": "application/json" };
  const res =
    args[0] === "release" && args[1]
      ? await fetch(`${base}/v1/admin/payouts/${encodeURIComponent(args[1])}/release`, { method: "POST", headers, body: "{}" })
      : args[0] === "list"
        ? await fetch(`${base}/v1/admin/payouts${args[1] ? `?state=${encodeURIComponent(args[1])}` : ""}`, { headers })
        : undefined;
  if (!res) {
    console.error(USAGE);
    return 2;
  }
  console.log(JSON.stringify(await res.json(), null, 2));
  return res.ok ? 0 : 1;
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

import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/platform/log.js";
import { openDataSource, runMigrations } from "../../src/platform/db/data-source.js";
import { loadCatalog } from "../../src/catalog/catalog-config.js";
import { startChain } from "../../src/chain/chain-runtime.js";
import { buildApp } from "../../src/server.js";
import { listenOnePort } from "../../src/platform/http/one-port-server.js";

// Child process of `npm run bench:load`: our server composed the way `svc serve` does (migrations,
// the embedded dev chain, the built-in facilitator), on its own event loop. Settings come from the
// environment the parent passes; the URL and the dev chain's RPC URL go back over IPC.

const config = loadConfig(process.env);
const log = createLogger(config.logLevel);
const ds = await openDataSource(config.database);
await runMigrations(ds);
const chain = await startChain(config, log, config.devChainJoinUrl);
const app = buildApp({ config, log, ds, skus: loadCatalog(config.catalogFile), version: "bench", chain });
await app.start();
const server = await listenOnePort(app.handler, 0, "127.0.0.1", config.http);
process.send!({ url: server.url, rpcUrl: chain.rpcUrl, payTo: chain.treasury });

process.on("message", async (msg) => {
  if (msg !== "stop") return;
  await server.close(1_000);
  await app.stop();
  await chain.close();
  await ds.destroy();
  process.exit(0);
});

import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import type { DataSource } from "typeorm";
import { toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/platform/log.js";
import { openDataSource, runMigrations } from "../../src/platform/db/data-source.js";
import { loadCatalog } from "../../src/catalog/catalog-config.js";
import { startChain, type ChainRuntime } from "../../src/chain/chain-runtime.js";
import { buildApp, type AppDeps } from "../../src/server.js";
import { listenOnePort } from "../../src/platform/http/one-port-server.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/x402/eip3009.js";

// One end-to-end paid run of `npm run bench` and `npm run bench:settlement`: a fresh server on the embedded
// dev chain (SQLite), one funded buyer, `calls` pre-signed payments of `attestation.single-use-seal` sent at
// `concurrency`; returns throughput and latency quantiles, plus what `inspect` reads before teardown.

export const DEV_USDC_DOMAIN = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Address };

export interface PaidRunOptions<T> {
  calls: number;
  concurrency: number;
  env?: Record<string, string>;
  signatureRecovery?: AppDeps["signatureRecovery"];
  inspect?: (ds: DataSource, chain: ChainRuntime) => Promise<T>;
}

export async function paidRun<T = undefined>(o: PaidRunOptions<T>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-"));
  const config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false", ...o.env });
  const log = createLogger("silent");
  const ds = await openDataSource(config.database);
  await runMigrations(ds);
  const chain = await startChain(config, log);
  const app = buildApp({ config, log, ds, skus: loadCatalog(config.catalogFile), version: "bench", chain, signatureRecovery: o.signatureRecovery });
  await app.start();
  const server = await listenOnePort(app.handler, 0, "127.0.0.1");
  try {
    const account = privateKeyToAccount(generatePrivateKey());
    const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${p}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    await post("/v1/dev/faucet", { address: account.address, amount_usd: 100 });
    const body = { producer: "bench", content_sha256: "a".repeat(64) };
    const ch = JSON.parse(Buffer.from((await post("/v1/services/attestation.single-use-seal", body)).headers.get("payment-required")!, "base64").toString());
    const accepted = ch.accepts[0];
    const headers = await Promise.all(
      Array.from({ length: o.calls }, async () => {
        const auth = { from: account.address, to: accepted.payTo as Address, value: BigInt(accepted.amount), validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce: toHex(randomBytes(32)) as Hex };
        const signature = await account.signTypedData({ domain: DEV_USDC_DOMAIN, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: auth });
        const payload = { x402Version: 2, accepted, payload: { signature, authorization: { ...auth, value: auth.value.toString(), validAfter: "0", validBefore: auth.validBefore.toString() } } };
        return Buffer.from(JSON.stringify(payload)).toString("base64");
      }),
    );
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next < headers.length) {
          const h = headers[next++]!;
          const t = performance.now();
          const res = await post("/v1/services/attestation.single-use-seal", body, { "payment-signature": h });
          if (res.status !== 200) throw new Error(`paid call answered ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
    const inspected = o.inspect ? await o.inspect(ds, chain) : undefined;
    return { perSecond: o.calls / seconds, p50: q(0.5), p99: q(0.99), inspected: inspected as T };
  } finally {
    await server.close(1_000);
    await app.stop();
    await chain.close();
    await ds.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

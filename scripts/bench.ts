import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../src/x402/eip3009.js";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { recoverTypedDataAddress, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/platform/log.js";
import { openDataSource, runMigrations } from "../src/platform/db/data-source.js";
import { loadCatalog } from "../src/catalog/catalog-config.js";
import { startChain } from "../src/chain/chain-runtime.js";
import { buildApp } from "../src/server.js";
import { listenOnePort } from "../src/platform/http/one-port-server.js";
import { authorizationDigest, domainSeparator, recoverSigner, type Authorization } from "../src/x402/eip3009.js";
import { nativeRecovery, type SignerRecovery } from "../src/x402/builtin-facilitator.js";

// npm run bench: the signature path (libsecp256k1 with a precomputed domain) against viem's pure-JS
// recoverTypedDataAddress, then paid calls end to end over HTTP on the dev chain with each of them.
// Figures are printed, never asserted.

const DOMAIN = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Address };
const TYPES = TRANSFER_WITH_AUTHORIZATION_TYPES;

const viemRecovery: SignerRecovery = (_sep, auth, signature) =>
  recoverTypedDataAddress({ domain: DOMAIN, types: TYPES, primaryType: "TransferWithAuthorization", message: auth, signature });

async function signedSamples(n: number) {
  const account = privateKeyToAccount(generatePrivateKey());
  return Promise.all(
    Array.from({ length: n }, async () => {
      const auth: Authorization = { from: account.address, to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value: 10_000n, validAfter: 0n, validBefore: 2_000_000_000n, nonce: toHex(randomBytes(32)) };
      const signature = await account.signTypedData({ domain: DOMAIN, types: TYPES, primaryType: "TransferWithAuthorization", message: auth });
      return { auth, signature };
    }),
  );
}

async function perSecond(ms: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    await fn();
    n++;
  }
  return (n * 1000) / ms;
}

async function signaturePath() {
  const samples = await signedSamples(256);
  const separator = domainSeparator(DOMAIN);
  let i = 0;
  const native = await perSecond(2_000, () => {
    const s = samples[i++ % samples.length]!;
    if (recoverSigner(authorizationDigest(separator, s.auth), s.signature) !== s.auth.from) throw new Error("wrong signer");
  });
  const viem = await perSecond(2_000, async () => {
    const s = samples[i++ % samples.length]!;
    if ((await viemRecovery(separator, s.auth, s.signature)) !== s.auth.from) throw new Error("wrong signer");
  });
  return { native, viem };
}

async function paidCalls(recovery: SignerRecovery, calls: number, concurrency: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-"));
  const config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" });
  const log = createLogger("silent");
  const ds = await openDataSource(config.database);
  await runMigrations(ds);
  const chain = await startChain(config, log);
  const app = buildApp({ config, log, ds, skus: loadCatalog(config.catalogFile), version: "bench", chain, signatureRecovery: recovery });
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
      Array.from({ length: calls }, async () => {
        const auth = { from: account.address, to: accepted.payTo as Address, value: BigInt(accepted.amount), validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce: toHex(randomBytes(32)) as Hex };
        const signature = await account.signTypedData({ domain: { ...DOMAIN }, types: TYPES, primaryType: "TransferWithAuthorization", message: auth });
        const payload = { x402Version: 2, accepted, payload: { signature, authorization: { ...auth, value: auth.value.toString(), validAfter: "0", validBefore: auth.validBefore.toString() } } };
        return Buffer.from(JSON.stringify(payload)).toString("base64");
      }),
    );
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
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
    return { perSecond: calls / seconds, p50: q(0.5), p99: q(0.99) };
  } finally {
    await server.close(1_000);
    await app.stop();
    await chain.close();
    await ds.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => n.toFixed(0).padStart(8);
console.log(`svc bench on ${os.cpus().length} cores, node ${process.version}\n`);
const sig = await signaturePath();
console.log("signature path (EIP-3009 digest + signer recovery), verifications/s");
console.log(`  libsecp256k1, precomputed domain  ${fmt(sig.native)}`);
console.log(`  viem recoverTypedDataAddress      ${fmt(sig.viem)}`);
console.log(`  ratio                             ${(sig.native / sig.viem).toFixed(1).padStart(8)}x\n`);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const native = await paidCalls(nativeRecovery, CALLS, CONCURRENCY);
const viem = await paidCalls(viemRecovery, CALLS, CONCURRENCY);
console.log(`paid calls end to end (HTTP, verify, run, settle on anvil, proof + ledger), ${CALLS} calls at concurrency ${CONCURRENCY}`);
console.log(`                                     calls/s   p50 ms   p99 ms`);
console.log(`  libsecp256k1 signature path       ${fmt(native.perSecond)} ${fmt(native.p50)} ${fmt(native.p99)}`);
console.log(`  viem signature path               ${fmt(viem.perSecond)} ${fmt(viem.p50)} ${fmt(viem.p99)}`);
console.log(`  ratio                             ${(native.perSecond / viem.perSecond).toFixed(2).padStart(8)}x`);

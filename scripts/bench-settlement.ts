import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { encodeFunctionData, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/platform/log.js";
import { startChain } from "../src/chain/chain-runtime.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../src/x402/eip3009.js";
import { X402PaymentEntity } from "../src/x402/payment.entity.js";
import { BuiltInFacilitator } from "../src/x402/builtin-facilitator.js";
import { TransactionSender } from "../src/chain/tx-sender.js";
import { DEV_USDC } from "../src/chain/artifacts.js";
import { PaymentPayloadSchema, PaymentRequirementsSchema } from "../gen/svc/payment/v1/x402_pb.js";
import { DEV_USDC_DOMAIN, paidRun } from "./bench/paid-run.js";

// npm run bench:settlement: paid calls end to end on the embedded dev chain (anvil), with batched
// settlement off (SETTLE_BATCH_WINDOW_MS=0: one transaction per payment) and on, printing settled
// payments per second, transactions sent and gas per payment. Figures are printed, never asserted.

const DOMAIN = DEV_USDC_DOMAIN;

async function run(windowMs: number, calls: number, concurrency: number) {
  const env = { PAYER_RATE_LIMIT_PER_MINUTE: "0", SETTLE_BATCH_WINDOW_MS: String(windowMs) };
  const r = await paidRun({
    calls,
    concurrency,
    env,
    inspect: async (ds, chain) => {
      const rows = await ds.manager.findBy(X402PaymentEntity, { state: "settled" });
      const txs = [...new Set(rows.map((row) => row.txHash as Hex))];
      let gas = 0n;
      for (const hash of txs) gas += (await chain.publicClient.getTransactionReceipt({ hash })).gasUsed;
      return { txs: txs.length, gasPerPayment: Number(gas) / rows.length };
    },
  });
  return { perSecond: r.perSecond, ...r.inspected };
}

/** The facilitator alone (no HTTP, no database): `n` verified authorizations settled concurrently. */
async function facilitatorOnly(windowMs: number, n: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-bench-fac-"));
  const config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: dir, DEV_CHAIN_PERSIST: "false" });
  const log = createLogger("silent");
  const chain = await startChain(config, log);
  try {
    const opts = { resendAfterMs: config.settleResendAfterMs, timeoutMs: config.settleTimeoutMs, pollMs: 25, log };
    const faucet = new TransactionSender(chain.publicClient, chain.faucetAccount!, chain.chain, opts);
    const sender = new TransactionSender(chain.publicClient, chain.facilitatorAccount!, chain.chain, opts);
    const batching = { batcher: config.settlementBatcherAddress!, windowMs, max: config.settleBatchMax, eager: config.settleBatchEager };
    const facilitator = new BuiltInFacilitator(chain.network, chain.publicClient, sender, undefined, undefined, batching, log);
    const payers = Array.from({ length: 16 }, () => privateKeyToAccount(generatePrivateKey()));
    for (const p of payers) {
      await faucet.send({ to: chain.network.usdcAddress, data: encodeFunctionData({ abi: DEV_USDC.abi, functionName: "mint", args: [p.address, 1_000_000_000n] }), gas: 200_000n });
    }
    const requirements = create(PaymentRequirementsSchema, {
      scheme: "exact", network: chain.network.caip2, amount: "10000", asset: chain.network.usdcAddress, payTo: chain.treasury, maxTimeoutSeconds: 300,
      extra: { name: chain.network.usdcDomain.name, version: chain.network.usdcDomain.version },
    });
    const payloads = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const account = payers[i % payers.length]!;
        const auth = { from: account.address, to: chain.treasury, value: 10_000n, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce: toHex(randomBytes(32)) as Hex };
        const signature = await account.signTypedData({ domain: DOMAIN, types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: "TransferWithAuthorization", message: auth });
        return create(PaymentPayloadSchema, {
          x402Version: 2, accepted: requirements,
          payload: { signature, authorization: { from: auth.from, to: auth.to, value: "10000", validAfter: "0", validBefore: auth.validBefore.toString(), nonce: auth.nonce } },
        });
      }),
    );
    const verifyStarted = performance.now();
    await Promise.all(payloads.map((p) => facilitator.verify(p, requirements)));
    const verifyPerSecond = n / ((performance.now() - verifyStarted) / 1000);
    const started = performance.now();
    const results = await Promise.all(payloads.map((p) => facilitator.settle(p, requirements)));
    const seconds = (performance.now() - started) / 1000;
    if (results.some((r) => !r.success)) throw new Error(`settlement failed: ${results.find((r) => !r.success)!.errorReason}`);
    return { perSecond: n / seconds, txs: new Set(results.map((r) => r.transaction)).size, verifyPerSecond };
  } finally {
    await chain.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const WINDOW = Number(process.env.BENCH_WINDOW_MS ?? 20);
const N = Number(process.env.BENCH_SETTLEMENTS ?? 2000);
const ONLY = process.env.BENCH_ONLY; // "e2e" or "facilitator"
const fmt = (n: number) => n.toFixed(0).padStart(10);
console.log(`batched settlement on anvil, ${os.cpus().length} cores, node ${process.version}`);
if (ONLY !== "facilitator") {
  console.log(`\npaid calls end to end (HTTP, verify, run, settle, proof + ledger), ${CALLS} calls at concurrency ${CONCURRENCY}`);
  console.log(`                                   payments/s  transactions  gas/payment`);
  const off = await run(0, CALLS, CONCURRENCY);
  console.log(`  window 0 (one tx per payment)  ${fmt(off.perSecond)}    ${fmt(off.txs)}   ${fmt(off.gasPerPayment)}`);
  const on = await run(WINDOW, CALLS, CONCURRENCY);
  console.log(`  window ${String(WINDOW).padEnd(3)} ms (batched)        ${fmt(on.perSecond)}    ${fmt(on.txs)}   ${fmt(on.gasPerPayment)}`);
  console.log(`  ratio                          ${(on.perSecond / off.perSecond).toFixed(2).padStart(10)}x`);
}
if (ONLY !== "e2e") {
  console.log(`\nthe built-in facilitator alone (verify + settle, no HTTP or database), ${N} settlements at once`);
  console.log(`                                   payments/s  transactions  (verify alone/s)`);
  const off = await facilitatorOnly(0, N);
  console.log(`  window 0 (one tx per payment)  ${fmt(off.perSecond)}    ${fmt(off.txs)}   ${fmt(off.verifyPerSecond)}`);
  const on = await facilitatorOnly(WINDOW, N);
  console.log(`  window ${String(WINDOW).padEnd(3)} ms (batched)        ${fmt(on.perSecond)}    ${fmt(on.txs)}   ${fmt(on.verifyPerSecond)}`);
  console.log(`  ratio                          ${(on.perSecond / off.perSecond).toFixed(2).padStart(10)}x`);
}

import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../src/x402/eip3009.js";
import os from "node:os";
import { randomBytes } from "node:crypto";
import { recoverTypedDataAddress, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizationDigest, domainSeparator, recoverSigner, type Authorization } from "../src/x402/eip3009.js";
import { nativeRecovery, type SignerRecovery } from "../src/x402/builtin-facilitator.js";
import { DEV_USDC_DOMAIN, paidRun } from "./bench/paid-run.js";

// npm run bench: the signature path (libsecp256k1 with a precomputed domain) against viem's pure-JS
// recoverTypedDataAddress, then paid calls end to end over HTTP on the dev chain with each of them.
// Figures are printed, never asserted.

const DOMAIN = DEV_USDC_DOMAIN;
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

const paidCalls = (recovery: SignerRecovery, calls: number, concurrency: number) => paidRun({ calls, concurrency, signatureRecovery: recovery });

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

import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";

// npm run demo: a complete paid call as a buyer makes it, against a running `npm start`
// (SVC_URL, default http://127.0.0.1:8402) on its embedded dev chain: a fresh wallet, test USDC from
// the faucet, an off-the-shelf x402 client paying the 402 challenge, the deliverable, the receipt
// and the public settlement proof.

const base = (process.env.SVC_URL ?? "http://127.0.0.1:8402").replace(/\/+$/, "");
const step = (text: string) => console.log(`\n> ${text}`);

const health = (await (await fetch(`${base}/v1/health`)).json()) as { chain?: { network: string; dev_chain: boolean; pay_to: string } };
if (!health.chain?.dev_chain) throw new Error(`${base} is not running on the embedded dev chain; the demo spends test money only`);
step(`service at ${base}, network ${health.chain.network}, treasury ${health.chain.pay_to}`);

const account = privateKeyToAccount(generatePrivateKey());
step(`new buyer wallet ${account.address}; asking the dev faucet for 1 test USDC`);
const faucet = await fetch(`${base}/v1/dev/faucet`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ address: account.address, amount_usd: 1 }) });
console.log(await faucet.json());

const sku = process.env.SKU ?? "attestation.single-use-seal";
const body = JSON.stringify(sku === "attestation.single-use-seal" ? { producer: "demo-agent", content: "hello from the demo" } : { subject: account.address });
step(`POST /v1/services/${sku} without payment`);
const unpaid = await fetch(`${base}/v1/services/${sku}`, { method: "POST", headers: { "content-type": "application/json" }, body });
const challenge = JSON.parse(Buffer.from(unpaid.headers.get("payment-required") ?? "", "base64").toString() || "{}");
console.log(`HTTP ${unpaid.status}; challenge:`, JSON.stringify(challenge.accepts?.[0] ?? challenge));

step("paying with @x402/fetch (signs an EIP-3009 authorization and retries)");
const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(account)));
const paid = await pay(`${base}/v1/services/${sku}`, { method: "POST", headers: { "content-type": "application/json" }, body });
const result = (await paid.json()) as { deliverable?: unknown; payment_proof?: { tx_hash: string }; svc_trust?: unknown; job_id?: string };
console.log(`HTTP ${paid.status}`);
console.log(JSON.stringify(result, null, 2));
const receipt = paid.headers.get("payment-response");
if (receipt) console.log("receipt:", decodePaymentResponseHeader(receipt));
if (paid.status !== 200 || !result.payment_proof) throw new Error("the paid call did not settle");

step(`public settlement proof GET /v1/proofs/settlement/${result.payment_proof.tx_hash}`);
console.log(JSON.stringify(await (await fetch(`${base}/v1/proofs/settlement/${result.payment_proof.tx_hash}`)).json(), null, 2));
console.log("\ndemo complete: one paid call, settled on-chain once, with its proof on the public rail");

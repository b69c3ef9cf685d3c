import express from "express";
import { createWalletClient, http, publicActions, type Hex } from "viem";
import { privateKeyToAccount, nonceManager } from "viem/accounts";
import { baseSepolia } from "viem/chains";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";

// Child process of `npm run bench:load`: the x402 reference facilitator, built the way the x402
// repository's example does (x402Facilitator + @x402/evm's exact scheme, three Express routes), signing
// with a dev key on the same anvil as our server. Fairness settings: viem's nonce manager (concurrent
// settlements from one key) and the same 50 ms receipt polling our dev chain client uses.

const rpcUrl = process.env.RPC_URL!;
const account = privateKeyToAccount(process.env.FACILITATOR_KEY as Hex, { nonceManager });
const chain = { ...baseSepolia, rpcUrls: { default: { http: [rpcUrl] } } };
const client = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: 50 }).extend(publicActions);

let broadcasts: Promise<unknown> = Promise.resolve();
/** Runs `send` after every earlier broadcast was accepted (or refused) by the node. */
function inOrder<T>(send: () => Promise<T>): Promise<T> {
  const result = broadcasts.then(send);
  broadcasts = result.catch(() => undefined);
  return result;
}

const signer = toFacilitatorEvmSigner({
  address: account.address,
  readContract: (args) => client.readContract({ ...args, args: args.args ?? [] } as never),
  verifyTypedData: (args) => client.verifyTypedData(args as never),
  writeContract: (args) => inOrder(() => client.writeContract({ ...args, args: args.args ?? [] } as never)),
  sendTransaction: (args) => inOrder(() => client.sendTransaction(args as never)),
  waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
  getCode: (args) => client.getCode(args),
});
const facilitator = new x402Facilitator().register("eip155:84532", new ExactEvmScheme(signer));

const app = express();
app.use(express.json());
app.post("/verify", async (req, res) => {
  try {
    res.json(await facilitator.verify(req.body.paymentPayload, req.body.paymentRequirements));
  } catch (err) {
    res.status(500).json({ error: (err as Error).message });
  }
});
app.post("/settle", async (req, res) => {
  try {
    res.json(await facilitator.settle(req.body.paymentPayload, req.body.paymentRequirements));
  } catch (err) {
    res.status(500).json({ error: (err as Error).message });
  }
});
app.get("/supported", (_req, res) => {
  res.json(facilitator.getSupported());
});

const server = app.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.send!({ url: `http://127.0.0.1:${port}`, address: account.address });
});
process.on("message", (msg) => {
  if (msg !== "stop") return;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

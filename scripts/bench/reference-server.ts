import { createHash } from "node:crypto";
import express from "express";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";

// Child process of `npm run bench:load`: the reference paid route. @x402/express's paymentMiddleware
// protects `POST /paid` at the same price as our SKU, settled through the reference facilitator over
// HTTP on loopback. The handler does a comparable small piece of work (a SHA-256 seal of the body).

const app = express();
const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: process.env.FACILITATOR_URL! })).register("eip155:84532", new ExactEvmScheme());
app.use(express.json());
app.use(
  paymentMiddleware(
    { "POST /paid": { accepts: { scheme: "exact", price: process.env.PRICE!, network: "eip155:84532", payTo: process.env.PAY_TO! }, description: "bench seal" } },
    resourceServer,
  ),
);
app.post("/paid", (req, res) => {
  const content = JSON.stringify(req.body ?? {});
  res.json({ sealed: true, seal_sha256: createHash("sha256").update(content).digest("hex"), sealed_at: new Date().toISOString() });
});

const server = app.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.send!({ url: `http://127.0.0.1:${port}` });
});
process.on("message", (msg) => {
  if (msg !== "stop") return;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

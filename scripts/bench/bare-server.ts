import http from "node:http";

// Child process of `npm run bench:load`: the floor for the challenge path. A bare Node HTTP server
// that reads the request body and answers a fixed 402 with an x402-like JSON body and
// PAYMENT-REQUIRED header, doing no other work.

const accepts = [
  {
    scheme: "exact",
    network: "eip155:84532",
    amount: "50000",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2" },
  },
];

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const required = { x402Version: 2, error: "Payment required", resource: { url: `http://${req.headers.host}${req.url}` }, accepts };
    const body = JSON.stringify({ x402Version: 1, error: "Payment required", accepts });
    res.writeHead(402, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "payment-required": Buffer.from(JSON.stringify(required)).toString("base64"),
      "cache-control": "no-store",
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.send!({ url: `http://127.0.0.1:${port}` });
});
process.on("message", (msg) => {
  if (msg !== "stop") return;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

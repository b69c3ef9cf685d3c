import http from "node:http";

// Child process of `npm run bench:load`: the floor for the challenge path. A bare Node HTTP server that
// reads the request body and answers with the very bytes our server's 402 challenge has (status, headers
// and body, captured once by the parent and passed in BARE_ANSWER), doing no other work. Answering the
// same bytes keeps the client's share of the work equal on both sides, so the ratio measures what our
// server does per request, not how much bigger its answer is than a made-up one.

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const answer = JSON.parse(process.env.BARE_ANSWER ?? "null") as Answer | null;
if (!answer) throw new Error("BARE_ANSWER (the status, headers and body to answer) is required");
const body = Buffer.from(answer.body);
const headers = { ...answer.headers, "content-length": String(body.length) };

const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(answer.status, headers);
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

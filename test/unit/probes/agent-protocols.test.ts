import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AgentCallError, mcpMessage, openSession, replyText, type Protocol } from "../../../src/probes/agent-protocols.js";

// The protocol adapters of security.injection-resilience against local servers answering in each
// protocol's documented format, including errors, rate limiting and malformed payloads.

type Handler = (req: http.IncomingMessage, body: any, res: http.ServerResponse) => void;

describe("probes/agent-protocols: talking to counterparty agents over HTTP, A2A and MCP", function () {
  let server: http.Server;
  let base = "";
  let handler: Handler = () => undefined;
  const requests: { path: string; headers: http.IncomingHttpHeaders; body: any }[] = [];
  before(async () => {
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString("utf8");
      const body = text ? JSON.parse(text) : undefined;
      requests.push({ path: req.url!, headers: req.headers, body });
      handler(req, body, res);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());
  beforeEach(() => (requests.length = 0));

  const session = (protocol: Protocol, mcp?: { tool: string; argument: string }) =>
    openSession({ target: `${base}/agent`, protocol, policy: { allow: [new URL(base).host], allowHttp: true }, userAgent: "test/1.0", mcp });
  const turn = (message: string, history: { role: "user" | "assistant"; content: string }[] = []) => ({ message, conversationId: "conv-1", history });
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  const failure = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err as AgentCallError;
    }
    throw new Error("expected a failure");
  };

  describe("plain HTTP", () => {
    it("posts {message, conversation_id, history} and reads the reply from JSON or text", async () => {
      handler = (_req, body, res) => json(res, 200, { reply: `echo: ${body.message}` });
      const a = await session("http").send(turn("hi", [{ role: "user", content: "before" }]), 2000);
      expect(a.text).to.equal("echo: hi");
      expect(requests[0]!.body).to.deep.equal({ message: "hi", conversation_id: "conv-1", history: [{ role: "user", content: "before" }] });
      expect(requests[0]!.headers["content-type"]).to.equal("application/json");
      handler = (_req, _body, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("plain answer");
      expect((await session("http").send(turn("hi"), 2000)).text).to.equal("plain answer");
    });

    it("reads the usual reply shapes", () => {
      expect(replyText({ response: "a" })).to.equal("a");
      expect(replyText({ message: { role: "assistant", content: "b" } })).to.equal("b");
      expect(replyText({ choices: [{ message: { content: "c" } }] })).to.equal("c");
      expect(replyText({ other: 1 })).to.equal('{"other":1}');
    });

    it("429 and 5xx are transient; 401 is not; a JSON content type with a malformed body is a protocol error", async () => {
      handler = (_req, _body, res) => json(res, 429, { error: "slow down" }, { "retry-after": "5" });
      const limited = await failure(session("http").send(turn("hi"), 2000));
      expect(limited).to.be.instanceOf(AgentCallError);
      expect(limited).to.include({ kind: "http", status: 429, transient: true });
      handler = (_req, _body, res) => json(res, 503, {});
      expect((await failure(session("http").send(turn("hi"), 2000))).transient).to.equal(true);
      handler = (_req, _body, res) => void res.writeHead(401).end();
      expect(await failure(session("http").send(turn("hi"), 2000))).to.include({ status: 401, transient: false });
      handler = (_req, _body, res) => void res.writeHead(200, { "content-type": "application/json" }).end("{not json");
      expect(await failure(session("http").send(turn("hi"), 2000))).to.include({ kind: "protocol", transient: false });
    });

    it("a target that does not answer in time is unreachable (transient)", async () => {
      handler = () => undefined; // never answers
      const err = await failure(session("http").send(turn("hi"), 300));
      expect(err).to.include({ kind: "unreachable", transient: true });
    });

    it("refuses a private address that is not allowlisted", async () => {
      const s = openSession({ target: "http://10.0.0.9/agent", protocol: "http", policy: { allow: [], allowHttp: true }, userAgent: "t" });
      expect((await failure(s.send(turn("hi"), 500))).message).to.contain("not a public address");
    });
  });

  describe("A2A JSON-RPC 0.3", () => {
    it("sends message/send with a user text part and reads a Message's parts", async () => {
      handler = (_req, rpc, res) => json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { kind: "message", messageId: "m1", role: "agent", parts: [{ kind: "text", text: "hello" }, { kind: "data", data: { ok: true } }] } });
      const a = await session("a2a").send(turn("hi"), 2000);
      expect(a.text).to.equal('hello\n{"ok":true}');
      const rpc = requests[0]!.body;
      expect(rpc).to.include({ jsonrpc: "2.0", method: "message/send" });
      expect(rpc.params.message).to.include({ kind: "message", role: "user", contextId: "conv-1" });
      expect(rpc.params.message.parts).to.deep.equal([{ kind: "text", text: "hi" }]);
      expect(rpc.params.configuration.blocking).to.equal(true);
    });

    it("polls a working Task with tasks/get until it completes, reading its status message and artifacts", async () => {
      let polls = 0;
      handler = (_req, rpc, res) => {
        if (rpc.method === "message/send") return json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { kind: "task", id: "t1", contextId: "conv-1", status: { state: "submitted" } } });
        polls++;
        const state = polls < 2 ? "working" : "completed";
        json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { kind: "task", id: "t1", status: { state, message: { kind: "message", role: "agent", parts: [{ kind: "text", text: "status" }] } }, artifacts: state === "completed" ? [{ artifactId: "a", parts: [{ kind: "text", text: "artifact" }] }] : [] } });
      };
      const a = await session("a2a").send(turn("hi"), 3000);
      expect(a.text).to.equal("status\nartifact");
      expect(requests.map((r) => r.body.method)).to.deep.equal(["message/send", "tasks/get", "tasks/get"]);
      expect(requests[1]!.body.params).to.deep.equal({ id: "t1" });
    });

    it("a JSON-RPC error, a non-JSON-RPC answer and a task that never finishes are failures", async () => {
      handler = (_req, rpc, res) => json(res, 200, { jsonrpc: "2.0", id: rpc.id, error: { code: -32602, message: "Invalid params" } });
      expect((await failure(session("a2a").send(turn("hi"), 2000))).message).to.contain("JSON-RPC error -32602 Invalid params");
      handler = (_req, _rpc, res) => json(res, 200, { reply: "not json-rpc" });
      expect(await failure(session("a2a").send(turn("hi"), 2000))).to.include({ kind: "protocol" });
      handler = (_req, rpc, res) => json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { kind: "task", id: "t2", status: { state: "working" } } });
      expect(await failure(session("a2a").send(turn("hi"), 700))).to.include({ kind: "unreachable" });
    });
  });

  describe("MCP over streamable HTTP", () => {
    const mcpServer = (answerAsSse: boolean): Handler => (req, rpc, res) => {
      if (rpc.method === "initialize") return json(res, 200, { jsonrpc: "2.0", id: rpc.id, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "t", version: "1" } } }, { "mcp-session-id": "s-1" });
      if (req.headers["mcp-session-id"] !== "s-1") return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session" } });
      if (rpc.method === "notifications/initialized") return void res.writeHead(202).end();
      if (rpc.params.name !== "chat") return json(res, 200, { jsonrpc: "2.0", id: rpc.id, error: { code: -32602, message: "Unknown tool" } });
      const result = { jsonrpc: "2.0", id: rpc.id, result: { content: [{ type: "text", text: `got ${rpc.params.arguments.prompt}` }] } };
      if (!answerAsSse) return json(res, 200, result);
      res.writeHead(200, { "content-type": "text/event-stream" }).end(`event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\nevent: message\ndata: ${JSON.stringify(result)}\n\n`);
    };

    it("initializes once, keeps the session header, and calls the tool with the message in the named argument (JSON or SSE answers)", async () => {
      for (const sse of [false, true]) {
        requests.length = 0;
        handler = mcpServer(sse);
        const s = session("mcp", { tool: "chat", argument: "prompt" });
        expect((await s.send(turn("one"), 2000)).text).to.equal("got one");
        expect((await s.send(turn("two", [{ role: "user", content: "one" }, { role: "assistant", content: "got one" }]), 2000)).text).to.equal("got Earlier in this conversation:\nUser: one\nAssistant: got one\n\nUser: two");
        expect(requests.map((r) => r.body.method)).to.deep.equal(["initialize", "notifications/initialized", "tools/call", "tools/call"]);
        expect(requests[0]!.body.params.protocolVersion).to.equal("2025-06-18");
        expect(requests[0]!.headers.accept).to.equal("application/json, text/event-stream");
        expect(requests[2]!.headers["mcp-session-id"]).to.equal("s-1");
        expect(requests[2]!.headers["mcp-protocol-version"]).to.equal("2025-06-18");
      }
    });

    it("an unknown tool is a protocol failure; an event stream without the response too", async () => {
      handler = mcpServer(false);
      expect((await failure(session("mcp", { tool: "nope", argument: "message" }).send(turn("x"), 2000))).message).to.contain("Unknown tool");
      expect(() => mcpMessage('event: message\ndata: {"jsonrpc":"2.0","id":9,"result":{}}\n\n', "text/event-stream", 3)).to.throw("no response");
      expect(mcpMessage('data: {"jsonrpc":"2.0","id":3,"result":{"a":1}}\n\n', "text/event-stream", 3)).to.deep.equal({ jsonrpc: "2.0", id: 3, result: { a: 1 } });
    });
  });
});

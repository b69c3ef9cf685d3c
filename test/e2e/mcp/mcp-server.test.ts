import { expect } from "chai";
import http2 from "node:http2";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isInitializeRequest, McpError, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { challengeOf, newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { registerAgent } from "../../fixtures/agents.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { llmEnvFor, startLlmServer, type LlmServer } from "../../fixtures/llm-server.js";

// The MCP tool server at /mcp, driven by the official MCP TypeScript SDK client and paid with the real
// x402 client library (x402Client + ExactEvmScheme), following the x402 MCP transport.

/** The official transport, asking `initialize` for one protocol version (the SDK client always asks for its newest). */
class VersionedTransport extends StreamableHTTPClientTransport {
  constructor(url: URL, private readonly askFor: string, opts?: StreamableHTTPClientTransportOptions) {
    super(url, opts);
  }
  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = isInitializeRequest(message) ? { ...message, params: { ...message.params, protocolVersion: this.askFor } } : message;
    return super.send(m, options);
  }
}

type Result = CallToolResult & { structuredContent?: Record<string, any>; _meta?: Record<string, any> };

describe("MCP tool server (/mcp, Streamable HTTP, x402 MCP transport)", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let catalog: Record<string, any>[];
  const clients: Client[] = [];

  async function connect(opts: { askFor?: string; headers?: Record<string, string> } = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const url = new URL("/mcp", srv.url);
    const init = opts.headers ? { requestInit: { headers: opts.headers } } : undefined;
    const transport = opts.askFor ? new VersionedTransport(url, opts.askFor, init) : new StreamableHTTPClientTransport(url, init);
    const client = new Client({ name: "mcp-e2e", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    // Caches each tool's outputSchema: every later callTool result is validated against it by the SDK.
    await client.listTools();
    return { client, transport };
  }

  const payer = (buyer: Buyer) => new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account));
  const call = (client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<Result>;

  const rpc = (body: unknown, headers: Record<string, string> = {}, method = "POST") =>
    fetch(`${srv.url}/mcp`, {
      method,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
    });
  const initialize = (protocolVersion: string) =>
    rpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "0" } } });

  before(async () => {
    srv = await startTestServer();
    catalog = ((await (await fetch(`${srv.url}/v1/services`)).json()) as { services: Record<string, any>[] }).services;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await srv.close();
  });

  describe("initialize", () => {
    it("serves serverInfo.version 1.1.0 and answers the SDK client's newer version with 2025-06-18", async () => {
      const { client, transport } = await connect();
      expect(client.getServerVersion()).to.include({ name: "svc", version: "1.1.0" });
      expect(client.getServerCapabilities()).to.have.property("tools");
      expect(client.getInstructions()).to.contain("x402/payment");
      expect(transport.protocolVersion).to.equal("2025-06-18");
    });

    for (const version of ["2025-06-18", "2025-03-26", "2024-11-05"]) {
      it(`negotiates ${version} when the official client asks for it, then serves tools under it`, async () => {
        const { client, transport } = await connect({ askFor: version });
        expect(transport.protocolVersion).to.equal(version);
        expect(client.getServerVersion()?.version).to.equal("1.1.0");
        expect((await client.listTools()).tools.map((t) => t.name)).to.include("list_services");
        expect((await call(client, "get_rules", {})).structuredContent).to.have.property("rules_version");
      });

      it(`answers a raw initialize for ${version} with ${version}, as JSON without a session`, async () => {
        const res = await initialize(version);
        expect(res.status).to.equal(200);
        expect(res.headers.get("content-type")).to.contain("application/json");
        expect(res.headers.get("mcp-session-id")).to.equal(null);
        const body = (await res.json()) as { result: { protocolVersion: string; serverInfo: { version: string } } };
        expect(body.result.protocolVersion).to.equal(version);
        expect(body.result.serverInfo.version).to.equal("1.1.0");
      });
    }

    it("answers an unknown version with its newest, and refuses requests under an unsupported protocol header", async () => {
      const body = (await (await initialize("2023-01-01")).json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).to.equal("2025-06-18");
      const refused = await rpc({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-protocol-version": "2025-11-25" });
      expect(refused.status).to.equal(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).to.contain("Unsupported protocol version");
    });

    it("answers over HTTP/2 cleartext on the same port", async () => {
      const session = http2.connect(srv.url);
      try {
        const stream = session.request({ ":method": "POST", ":path": "/mcp", "content-type": "application/json", accept: "application/json, text/event-stream" });
        stream.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
        let status = 0;
        let text = "";
        stream.on("response", (h) => (status = Number(h[":status"])));
        stream.setEncoding("utf8");
        for await (const chunk of stream) text += chunk;
        expect(status).to.equal(200);
        const tools = (JSON.parse(text) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
        expect(tools).to.include.members(["agent.trust-badge", "get_result"]);
      } finally {
        session.close();
      }
    });

    it("is stateless: GET and DELETE answer 405, other paths under /mcp 404, foreign origins 403", async () => {
      const get = await rpc(undefined, { accept: "text/event-stream" }, "GET");
      expect(get.status).to.equal(405);
      expect(get.headers.get("allow")).to.equal("POST");
      expect((await rpc(undefined, {}, "DELETE")).status).to.equal(405);
      expect((await fetch(`${srv.url}/mcp/other`, { method: "POST", body: "{}" })).status).to.equal(404);
      // A browser page from another origin (a DNS-rebinding attempt) is refused.
      expect((await rpc({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { origin: "http://evil.example" })).status).to.equal(403);
    });
  });

  describe("tools/list", () => {
    it("lists every available SKU as a tool named by its sku_id with its published schemas, and no unavailable SKU", async () => {
      const { client } = await connect();
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      const available = catalog.filter((s) => s.available);
      const unavailable = catalog.filter((s) => !s.available);
      expect(available.length).to.be.greaterThan(5);
      expect(unavailable.map((s) => s.sku_id)).to.include("prediction.service");
      for (const sku of available) {
        const tool = byName.get(sku.sku_id);
        expect(tool, sku.sku_id).to.not.equal(undefined);
        expect(tool!.name).to.match(/^[A-Za-z0-9._-]{1,128}$/);
        expect(tool!.inputSchema).to.deep.equal(sku["x-input-schema"]);
        expect(tool!.description).to.contain(sku.description);
        expect(tool!._meta?.["svc/sku"]).to.include({ sku_id: sku.sku_id, mode: sku.mode, price_amount: String(Math.round(sku["x-price-usd"] * 1e6)) });
        const branches = (tool!.outputSchema as unknown as { anyOf: Record<string, unknown>[] }).anyOf;
        expect(tool!.outputSchema!.type).to.equal("object");
        if (sku.mode === "sync") expect(branches[0]).to.deep.equal(sku["x-output-schema"]);
        else expect(branches[0]).to.have.nested.property("properties.job_id");
        expect(branches.some((b) => (b.required as string[] | undefined)?.includes("x402Version"))).to.equal(true);
      }
      for (const sku of unavailable) expect(byName.has(sku.sku_id), sku.sku_id).to.equal(false);
      const free = ["list_services", "get_rules", "get_proof", "get_settlement_proof", "list_settlement_proofs", "get_reputation", "get_result"];
      expect(tools.map((t) => t.name).sort()).to.deep.equal([...available.map((s) => s.sku_id), ...free].sort());
      for (const name of free) expect(byName.get(name)!.annotations).to.include({ readOnlyHint: true });
    });
  });

  describe("free tools", () => {
    it("list_services answers the catalog as GET /v1/services does", async () => {
      const { client } = await connect();
      const res = await call(client, "list_services", {});
      expect(res.isError).to.not.equal(true);
      expect(res.structuredContent!.services).to.deep.equal(catalog);
      expect(JSON.parse((res.content[0] as { text: string }).text)).to.deep.equal(res.structuredContent);
    });

    it("get_reputation looks an agent up in-process; an unknown agent is a tool error with the HTTP reason", async () => {
      const { client } = await connect();
      const agent = await registerAgent(srv);
      const rest = await (await fetch(`${srv.url}/a2a/agents/${agent.name}/reputation`)).json();
      const res = await call(client, "get_reputation", { name: agent.name });
      expect(res.isError).to.not.equal(true);
      expect(res.structuredContent).to.deep.equal(rest);
      const missing = await call(client, "get_reputation", { name: "nobody-at-all" });
      expect(missing.isError).to.equal(true);
      expect(missing.structuredContent!.error).to.include({ http_status: 404 });
    });

    it("refuses bad arguments with the field, and unknown tools with a JSON-RPC error", async () => {
      const { client } = await connect();
      const bad = await call(client, "get_settlement_proof", { tx_hash: "0x12" });
      expect(bad.isError).to.equal(true);
      expect(bad.structuredContent!.error).to.include({ code: "invalid_input", http_status: 400 });
      expect(bad.structuredContent!.error.fields[0].field).to.equal("tx_hash");
      const err = await call(client, "no_such_tool", {}).catch((e) => e);
      expect(err).to.be.instanceOf(McpError);
      expect((err as McpError).message).to.contain("Unknown tool");
    });
  });

  describe("paid tools", () => {
    it("an unpaid call answers the PaymentRequired; paying with x402Client and _meta delivers once, with the receipt and its proof", async () => {
      const { client } = await connect();
      const buyer = await newBuyer(srv);
      const before = await usdcBalance(srv, buyer.address);
      const input = { subject: buyer.address };

      const unpaid = await call(client, "agent.trust-badge", input);
      expect(unpaid.isError).to.equal(true);
      const required = unpaid.structuredContent!;
      expect(required).to.include({ x402Version: 2 });
      expect(required.resource.url).to.equal("mcp://tool/agent.trust-badge");
      const http = await challengeOf(srv, "agent.trust-badge", input);
      expect(required.accepts).to.deep.equal(http.accepts);
      expect(required.accepts[0]).to.include({ scheme: "exact", amount: "10000", network: srv.chain.network.caip2 });
      const fallback = JSON.parse((unpaid.content[0] as { text: string }).text);
      expect(fallback["x402/error"]).to.deep.include({ code: 402, data: required });
      expect(await usdcBalance(srv, buyer.address)).to.equal(before);

      const payload = await payer(buyer).createPaymentPayload(required as never);
      const paid = await call(client, "agent.trust-badge", input, { "x402/payment": payload });
      expect(paid.isError).to.not.equal(true);
      expect(paid.structuredContent).to.include({ subject: buyer.address, registered: false, badge: "none" });
      expect(JSON.parse((paid.content[0] as { text: string }).text)).to.deep.equal(paid.structuredContent);
      const receipt = paid._meta!["x402/payment-response"];
      expect(receipt).to.include({ success: true, network: srv.chain.network.caip2, payer: buyer.address });
      expect(receipt.transaction).to.match(/^0x[0-9a-f]{64}$/);
      expect(paid._meta!["svc/call"]).to.deep.include({ status: "delivered", charged: true, sku_id: "agent.trust-badge" });
      expect(paid._meta!["svc/call"].payment_proof.tx_hash).to.equal(receipt.transaction);
      expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);

      const proof = await call(client, "get_settlement_proof", { tx_hash: receipt.transaction });
      expect(proof.isError).to.not.equal(true);
      expect(proof.structuredContent!.proof).to.include({ settlement_ref: receipt.transaction });
      const byId = await call(client, "get_proof", { proof_id: proof.structuredContent!.proof.proof_id });
      expect(byId.structuredContent!.proof.proof_id).to.equal(proof.structuredContent!.proof.proof_id);
      await expectLedgerConsistent(srv.ds);
    });

    it("the same payment sent twice concurrently settles once and both calls get the same result and receipt", async () => {
      const { client } = await connect();
      const buyer = await newBuyer(srv);
      const before = await usdcBalance(srv, buyer.address);
      const input = { subject: buyer.address };
      const required = (await call(client, "agent.trust-badge", input)).structuredContent!;
      const payload = await payer(buyer).createPaymentPayload(required as never);
      const [a, b] = await Promise.all([
        call(client, "agent.trust-badge", input, { "x402/payment": payload }),
        call(client, "agent.trust-badge", input, { "x402/payment": payload }),
      ]);
      expect(a.isError).to.not.equal(true);
      expect(b.isError).to.not.equal(true);
      expect(a.structuredContent).to.deep.equal(b.structuredContent);
      expect(a._meta!["x402/payment-response"].transaction).to.equal(b._meta!["x402/payment-response"].transaction);
      expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
      const rows = await srv.ds.manager.findBy(X402PaymentEntity, { payer: buyer.address });
      expect(rows.map((r) => r.state)).to.deep.equal(["settled"]);
      // Sent again later, it is replayed: same deliverable, no second charge.
      const again = await call(client, "agent.trust-badge", input, { "x402/payment": payload });
      expect(again.structuredContent).to.deep.equal(a.structuredContent);
      expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    });

    it("an async SKU answers its pending job, and get_result delivers it", async () => {
      const { client } = await connect();
      const buyer = await newBuyer(srv);
      const before = await usdcBalance(srv, buyer.address);
      const input = { subject: buyer.address };
      const required = (await call(client, "agent.prehire-check", input)).structuredContent!;
      expect(required.accepts[0].amount).to.equal("250000");
      const paid = await call(client, "agent.prehire-check", input, { "x402/payment": await payer(buyer).createPaymentPayload(required as never) });
      expect(paid.isError).to.not.equal(true);
      const ticket = paid.structuredContent!;
      expect(ticket).to.include({ status: "pending", sku_id: "agent.prehire-check", charged: true });
      expect(ticket.poll).to.deep.equal({ tool: "get_result", arguments: { job_id: ticket.job_id } });
      expect(paid._meta!["x402/payment-response"]).to.include({ success: true });
      expect(await usdcBalance(srv, buyer.address)).to.equal(before - 250_000n);

      let result: Record<string, any> = {};
      for (let i = 0; i < 200; i++) {
        result = (await call(client, "get_result", ticket.poll.arguments)).structuredContent!;
        if (result.status !== "pending") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(result).to.include({ status: "delivered", job_id: ticket.job_id, sku_id: "agent.prehire-check" });
      expect(result.deliverable.subject).to.equal(buyer.address);
      expect(result.payment_proof.tx_hash).to.equal(paid._meta!["x402/payment-response"].transaction);
      const missing = await call(client, "get_result", { job_id: "job_nope" });
      expect(missing.structuredContent!.error).to.include({ code: "job_not_found", http_status: 404 });
    });

    it("bad input is a tool error naming the field, even with a valid payment attached: nothing is charged", async () => {
      const { client } = await connect();
      const buyer = await newBuyer(srv);
      const before = await usdcBalance(srv, buyer.address);
      const agent = await registerAgent(srv);
      const required = (await call(client, "reputation.lookup", { task: `agent_id: ${agent.name}` })).structuredContent!;
      expect(required).to.include({ x402Version: 2 });
      const payload = await payer(buyer).createPaymentPayload(required as never);
      const res = await call(client, "reputation.lookup", { task: "who is best?" }, { "x402/payment": payload });
      expect(res.isError).to.equal(true);
      expect(res.structuredContent!.error).to.include({ code: "invalid_input", http_status: 400 });
      expect(res.structuredContent!.error.fields.map((f: { field: string }) => f.field)).to.include("task");
      expect(await usdcBalance(srv, buyer.address)).to.equal(before);
      expect(await srv.ds.manager.countBy(X402PaymentEntity, { payer: buyer.address })).to.equal(0);
    });

    it("gate refusals and unresolvable subjects are tool errors with their reason codes, never charged", async () => {
      const buyer = await newBuyer(srv);
      const before = await usdcBalance(srv, buyer.address);
      const { client } = await connect();
      const required = (await call(client, "agent.trust-badge", { subject: buyer.address })).structuredContent!;
      const payload = await payer(buyer).createPaymentPayload(required as never);

      const cn = await connect({ headers: { "svc-jurisdiction": "CN" } });
      const refused = await call(cn.client, "agent.trust-badge", { subject: buyer.address }, { "x402/payment": payload });
      expect(refused.isError).to.equal(true);
      expect(refused.structuredContent!.error).to.include({ code: "jurisdiction_excluded", http_status: 409 });

      const nobody = await call(client, "reputation.lookup", { task: "agent_id: nobody-here" });
      expect(nobody.isError).to.equal(true);
      expect(nobody.structuredContent).to.deep.include({ charged: false });
      expect(nobody.structuredContent!.error.code).to.equal("insufficient_subject");
      expect(nobody.structuredContent!.error.message).to.contain("nobody-here");

      // A payment signed for one price cannot pay another tool: the PaymentRequired comes back with the reason.
      const wrong = await call(client, "agent.prehire-check", { subject: buyer.address }, { "x402/payment": payload });
      expect(wrong.isError).to.equal(true);
      expect(wrong.structuredContent).to.include({ x402Version: 2, error: "No matching payment requirements" });
      expect(wrong.structuredContent!.resource.url).to.equal("mcp://tool/agent.prehire-check");

      // A payment that fails verification (an unfunded wallet) answers the PaymentRequired with the facilitator's reason.
      const broke = privateKeyToAccount(generatePrivateKey());
      const unfunded = await payer({ account: broke, address: broke.address }).createPaymentPayload(required as never);
      const invalid = await call(client, "agent.trust-badge", { subject: buyer.address }, { "x402/payment": unfunded });
      expect(invalid.isError).to.equal(true);
      expect(invalid.structuredContent).to.include({ x402Version: 2, error: "invalid_exact_evm_insufficient_balance" });
      expect(JSON.parse((invalid.content[0] as { text: string }).text)["x402/error"].code).to.equal(402);

      // Not listed (no model configured here), and refused by the gate like its HTTP call.
      const unsold = await call(client, "translation.zh-en", { text: "你好" });
      expect(unsold.structuredContent!.error).to.include({ code: "service_unavailable", http_status: 409 });

      const retired = await call(client, "prediction.service", {});
      expect(retired.isError).to.equal(true);
      expect(retired.structuredContent!.error.code).to.equal("insufficient_subject");
      expect(await usdcBalance(srv, buyer.address)).to.equal(before);
    });
  });
});

describe("MCP tool server with a language model configured (every engine-backed SKU a tool)", function () {
  this.timeout(120_000);
  let llm: LlmServer;
  let srv: TestServer;

  before(async () => {
    llm = await startLlmServer();
    srv = await startTestServer(llmEnvFor(llm.base));
  });
  after(async () => {
    await srv.close();
    await llm.close();
  });

  it("lists every available SKU, and the official client compiles every tool's output schema", async () => {
    const catalog = ((await (await fetch(`${srv.url}/v1/services`)).json()) as { services: Record<string, any>[] }).services;
    const client = new Client({ name: "mcp-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", srv.url)));
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      const available = catalog.filter((s) => s.available);
      expect(available.length).to.be.greaterThan(30);
      for (const sku of available) expect(byName.get(sku.sku_id)?.inputSchema, sku.sku_id).to.deep.equal(sku["x-input-schema"]);
      for (const sku of catalog.filter((s) => !s.available)) expect(byName.has(sku.sku_id), sku.sku_id).to.equal(false);
      expect(llm.requests).to.have.length(0);
    } finally {
      await client.close();
    }
  });
});

import { expect } from "chai";
import { randomUUID } from "node:crypto";
import { Role, TaskState, type Message, type Part, type Task } from "@a2a-js/sdk";
import { Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { SkuHandler } from "../../../src/skus/sku-handler.js";
import { skuHandlers } from "../../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../../src/skus/subject.js";
import { X402PaymentEntity } from "../../../src/x402/payment.entity.js";
import { A2aTaskEntity } from "../../../src/a2a/a2a-task.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";

// A2A 0.3 SKU calls with the official @a2a-js/sdk client in its v0.3 compatibility mode, paid with a real
// x402 client through the a2a-x402 extension (standalone flow).

const X402_EXT = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
const withX402 = { serviceParameters: { "X-A2A-Extensions": X402_EXT } };
/** An async SKU whose engine always fails (to exercise failed tasks and refunds). */
const FAILING_ASYNC = "content.youtube-research";

const dataPart = (value: Record<string, unknown>): Part => ({ content: { $case: "data", value }, mediaType: "application/json", filename: "", metadata: undefined });
const textPart = (value: string): Part => ({ content: { $case: "text", value }, mediaType: "text/plain", filename: "", metadata: undefined });

function userMessage(parts: Part[], taskId = "", metadata?: Record<string, unknown>): Message {
  return { messageId: randomUUID(), contextId: "", taskId, role: Role.ROLE_USER, parts, metadata, extensions: [], referenceTaskIds: [] };
}

const send = (client: Client, message: Message) => client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }, withX402) as Promise<Task>;
const callSku = (client: Client, skuId: string, input: Record<string, unknown>) => send(client, userMessage([textPart(`call ${skuId}`), dataPart({ sku_id: skuId, input })]));
const statusMeta = (task: Task) => task.status?.message?.metadata ?? {};
const states = (task: Task) => (task.metadata?.["svc.state_transitions"] as { state: string }[]).map((t) => t.state);

describe("A2A JSON-RPC: SKU calls paid with the a2a-x402 extension", function () {
  this.timeout(90_000);
  let srv: TestServer;
  let client: Client;
  // Subjects the failing engine ran for: only this test's are counted (the database is shared with the run's other suites).
  const failingRuns: string[] = [];

  const sdkClient = (base: string) =>
    new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
        cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      }),
    ).createFromUrl(base);

  /** Signs the v2 PaymentRequired of an input-required task with a real x402 client. */
  const paymentFor = (buyer: Buyer, task: Task) =>
    new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)).createPaymentPayload(statusMeta(task)["x402.payment.required"] as never);

  const pay = (task: Task, payload: unknown) =>
    send(client, userMessage([textPart("Here is the payment authorization.")], task.id, { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload }));

  async function pollTask(id: string, until: (t: Task) => boolean): Promise<Task> {
    for (let i = 0; i < 400; i++) {
      const task = await client.getTask({ tenant: "", id });
      if (until(task)) return task;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${id} never reached the expected state`);
  }

  before(async () => {
    const handlers = new Map(skuHandlers(NO_AGENTS));
    const prehire = handlers.get("agent.prehire-check")!;
    const failing: SkuHandler<any> = { ...prehire, skuId: FAILING_ASYNC, run: async (input: { subject: string }) => { failingRuns.push(input.subject); throw new Error("upstream engine crashed"); } };
    handlers.set(FAILING_ASYNC, failing);
    srv = await startTestServer({}, { handlers });
    client = await sdkClient(srv.url);
  });
  after(async () => {
    await expectLedgerConsistent(srv.ds);
    await srv.close();
  });

  it("the client resolves the card at /.well-known/agent-card.json: 0.3.0, JSON-RPC, no streaming, no push, history kept, x402 extension required", async () => {
    expect(client.protocolVersion).to.equal("0.3");
    const card = (await (await fetch(`${srv.url}/.well-known/agent-card.json`)).json()) as Record<string, any>;
    expect(card).to.include({ protocolVersion: "0.3.0", version: "2.1.0", preferredTransport: "JSONRPC", url: `${srv.url}/a2a/jsonrpc` });
    expect(card.capabilities).to.include({ streaming: false, pushNotifications: false, stateTransitionHistory: true });
    expect(card.capabilities.extensions).to.deep.include({ uri: X402_EXT, description: card.capabilities.extensions[0].description, required: true });
    expect(card.securitySchemes).to.have.property("bearer");
    expect(card.skills.map((s: { id: string }) => s.id)).to.include.members(["agent", "oracle", "security"]);
    const sdkCard = await client.getAgentCard();
    expect(sdkCard.capabilities).to.include({ streaming: false, pushNotifications: false });
    expect(sdkCard.capabilities!.extensions.map((e) => e.uri)).to.deep.equal([X402_EXT]);
    expect(sdkCard.supportedInterfaces[0]).to.include({ url: `${srv.url}/a2a/jsonrpc`, protocolBinding: "JSONRPC" });
  });

  it("unpaid: input-required with the PaymentRequired; paid on the same task: completed with the deliverable, charged exactly once", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const unpaid = await callSku(client, "agent.trust-badge", { subject: buyer.address });
    expect(unpaid.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
    const required = statusMeta(unpaid)["x402.payment.required"] as Record<string, any>;
    expect(statusMeta(unpaid)["x402.payment.status"]).to.equal("payment-required");
    expect(required.x402Version).to.equal(2);
    expect(required.accepts[0]).to.include({ scheme: "exact", amount: "10000", payTo: srv.chain.treasury });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);

    const payload = await paymentFor(buyer, unpaid);
    const done = await pay(unpaid, payload);
    expect(done.id).to.equal(unpaid.id);
    expect(done.status?.state, JSON.stringify(statusMeta(done))).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect(statusMeta(done)["x402.payment.status"]).to.equal("payment-completed");
    const receipts = statusMeta(done)["x402.payment.receipts"] as Record<string, any>[];
    expect(receipts).to.have.length(1);
    expect(receipts[0]).to.include({ success: true, payer: buyer.address });
    const artifact = done.artifacts.find((a) => a.artifactId === "deliverable")!;
    const part = artifact.parts[0]!.content as { $case: string; value: Record<string, unknown> };
    expect(part.$case).to.equal("data");
    expect(part.value).to.include({ subject: buyer.address, badge: "none", score: 0 });
    expect(artifact.metadata).to.nested.include({ sku_id: "agent.trust-badge", charged: true, "payment_proof.tx_hash": receipts[0]!.transaction });
    expect(artifact.metadata).to.have.nested.property("svc_trust.content_sha256");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    expect(states(done)).to.deep.equal(["submitted", "input-required", "working", "completed"]);
  });

  it("the same payment sent twice settles once: refused on the finished task, replayed on a new one", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const input = { subject: buyer.address };
    const first = await callSku(client, "agent.trust-badge", input);
    const payload = await paymentFor(buyer, first);
    const done = await pay(first, payload);
    expect(done.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);

    const again = await pay(first, payload).catch((e: Error) => e);
    expect(again).to.be.instanceOf(Error);
    expect(String((again as Error).message)).to.match(/terminal state/);

    const second = await callSku(client, "agent.trust-badge", input);
    const replay = await pay(second, payload);
    expect(replay.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    const value = (t: Task) => (t.artifacts[0]!.parts[0]!.content as { value: unknown }).value;
    expect(value(replay)).to.deep.equal(value(done));
    expect((statusMeta(replay)["x402.payment.receipts"] as { transaction: string }[])[0]!.transaction).to.equal((statusMeta(done)["x402.payment.receipts"] as { transaction: string }[])[0]!.transaction);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    expect(await srv.ds.manager.countBy(X402PaymentEntity, { payer: buyer.address, state: "settled" })).to.equal(1);
  });

  it("tasks/get returns the state-transition history, historyLength honoured", async () => {
    const buyer = await newBuyer(srv);
    const unpaid = await callSku(client, "agent.trust-badge", { subject: buyer.address });
    await pay(unpaid, await paymentFor(buyer, unpaid));
    const full = await client.getTask({ tenant: "", id: unpaid.id });
    expect(full.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
    // user call, agent input-required, user payment, agent working, agent completed
    expect(full.history.map((m) => [m.role, m.metadata?.["svc.state"] ?? null])).to.deep.equal([
      [Role.ROLE_USER, null],
      [Role.ROLE_AGENT, "input-required"],
      [Role.ROLE_USER, null],
      [Role.ROLE_AGENT, "working"],
      [Role.ROLE_AGENT, "completed"],
    ]);
    const timestamps = (full.metadata!["svc.state_transitions"] as { timestamp: string }[]).map((t) => Date.parse(t.timestamp));
    expect(timestamps).to.deep.equal([...timestamps].sort((a, b) => a - b));
    const last2 = await client.getTask({ tenant: "", id: unpaid.id, historyLength: 2 });
    expect(last2.history.map((m) => m.metadata?.["svc.state"])).to.deep.equal(["working", "completed"]);
    const none = await client.getTask({ tenant: "", id: unpaid.id, historyLength: 0 });
    expect(none.history).to.have.length(0);

    const row = await srv.ds.manager.findOneByOrFail(A2aTaskEntity, { taskId: unpaid.id });
    expect(row).to.include({ state: "completed", skuId: "agent.trust-badge" });
  });

  it("tasks live in the database: a task started on one server is read, paid and completed on another", async () => {
    const other = await startTestServer();
    try {
      const otherClient = await sdkClient(other.url);
      const buyer = await newBuyer(other);
      const before = await usdcBalance(other, buyer.address);
      const unpaid = await callSku(client, "agent.trust-badge", { subject: buyer.address });
      const seen = await otherClient.getTask({ tenant: "", id: unpaid.id });
      expect(seen.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      const payload = await paymentFor(buyer, seen);
      const message = userMessage([textPart("paying")], unpaid.id, { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload });
      const done = (await otherClient.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }, withX402)) as Task;
      expect(done.status?.state, JSON.stringify(statusMeta(done))).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(await usdcBalance(other, buyer.address)).to.equal(before - 10_000n);
      const back = await client.getTask({ tenant: "", id: unpaid.id });
      expect(back.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(back.artifacts[0]!.parts[0]!.content).to.deep.equal(done.artifacts[0]!.parts[0]!.content);
    } finally {
      await other.close();
    }
  });

  it("an async SKU: working with its job after payment, completed with the deliverable when tasks/get finds the job done", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const unpaid = await callSku(client, "agent.prehire-check", { subject: buyer.address });
    expect((statusMeta(unpaid)["x402.payment.required"] as any).accepts[0].amount).to.equal("250000");
    const working = await pay(unpaid, await paymentFor(buyer, unpaid));
    expect(working.status?.state).to.equal(TaskState.TASK_STATE_WORKING);
    expect(statusMeta(working)["x402.payment.status"]).to.equal("payment-completed");
    expect(working.metadata!["svc.job_id"]).to.be.a("string");
    const done = await pollTask(unpaid.id, (t) => t.status?.state !== TaskState.TASK_STATE_WORKING);
    expect(done.status?.state, JSON.stringify(statusMeta(done))).to.equal(TaskState.TASK_STATE_COMPLETED);
    expect((statusMeta(done)["x402.payment.receipts"] as unknown[]).length).to.equal(1);
    const deliverable = (done.artifacts[0]!.parts[0]!.content as { value: Record<string, unknown> }).value;
    expect(deliverable).to.include({ subject: buyer.address, subject_kind: "wallet" });
    expect(done.artifacts[0]!.metadata).to.include({ sku_id: "agent.prehire-check", job_id: working.metadata!["svc.job_id"] });
    expect(states(done)).to.deep.equal(["submitted", "input-required", "working", "working", "completed"]);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 250_000n);
  });

  it("an async SKU whose job fails: failed with the reason, and the payment refunded", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const unpaid = await callSku(client, FAILING_ASYNC, { subject: buyer.address });
    const working = await pay(unpaid, await paymentFor(buyer, unpaid));
    expect(working.status?.state).to.equal(TaskState.TASK_STATE_WORKING);
    const failed = await pollTask(unpaid.id, (t) => t.status?.state === TaskState.TASK_STATE_FAILED && /^0x/.test(String(t.metadata?.["svc.refund_tx_hash"])));
    expect(statusMeta(failed)["svc.error"]).to.deep.include({ code: "service_failed" });
    expect(String((statusMeta(failed)["svc.error"] as { message: string }).message)).to.contain("upstream engine crashed");
    expect(failingRuns.filter((s) => s === buyer.address)).to.have.length(3);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("bad input, an unknown SKU or a message naming no SKU: failed at once, never challenged, nothing charged", async () => {
    const buyer = await newBuyer(srv);
    const before = await usdcBalance(srv, buyer.address);
    const bad = await callSku(client, "agent.trust-badge", {});
    expect(bad.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(statusMeta(bad)).to.not.have.property("x402.payment.required");
    expect(statusMeta(bad)["svc.error"]).to.deep.include({ code: "invalid_input" });
    expect((statusMeta(bad)["svc.error"] as { fields: { field: string }[] }).fields.map((f) => f.field)).to.include("subject");
    expect(statusMeta(bad)["svc.charged"]).to.equal(false);

    const unknown = await callSku(client, "nope.nothing", {});
    expect(unknown.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(statusMeta(unknown)["svc.error"]).to.deep.include({ code: "sku_not_found" });

    const vague = await send(client, userMessage([textPart("give me a trust badge")]));
    expect(vague.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(statusMeta(vague)["svc.error"]).to.deep.include({ code: "invalid_request" });
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("a bad payment fails the task uncharged; a declined payment or tasks/cancel cancels it", async () => {
    const buyer = await newBuyer(srv, 0.001);
    const unpaid = await callSku(client, "agent.trust-badge", { subject: buyer.address });
    const broke = await pay(unpaid, await paymentFor(buyer, unpaid));
    expect(broke.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(statusMeta(broke)).to.include({ "x402.payment.status": "payment-failed", "x402.payment.error": "payment_failed", "svc.charged": false });

    const declined = await callSku(client, "agent.trust-badge", { subject: buyer.address });
    const canceled = await send(client, userMessage([textPart("no thanks")], declined.id, { "x402.payment.status": "payment-rejected" }));
    expect(canceled.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect(statusMeta(canceled)["x402.payment.status"]).to.equal("payment-rejected");

    const abandoned = await callSku(client, "agent.trust-badge", { subject: buyer.address });
    const viaCancel = await client.cancelTask({ tenant: "", id: abandoned.id, metadata: undefined });
    expect(viaCancel.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: "", id: abandoned.id })).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
  });

  it("a message without the x402 extension activated is refused, as the card's required extension says", async () => {
    const err = await client
      .sendMessage({ tenant: "", message: userMessage([dataPart({ sku_id: "agent.trust-badge", input: { subject: "0x0000000000000000000000000000000000000001" } })]), configuration: undefined, metadata: undefined })
      .catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error);
    expect((err as Error).message).to.contain(X402_EXT);
  });

  it("speaks the 0.3 wire format at /a2a/jsonrpc only, and leaves the registry's /a2a routes alone", async () => {
    const rpc = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${srv.url}/a2a/jsonrpc`, { method: "POST", headers: { "content-type": "application/json", "x-a2a-extensions": X402_EXT, ...headers }, body: JSON.stringify(body) });
    const message = { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "data", data: { sku_id: "agent.trust-badge", input: { subject: "0x0000000000000000000000000000000000000001" } } }] };
    const res = await rpc({ jsonrpc: "2.0", id: 7, method: "message/send", params: { message } });
    expect(res.status).to.equal(200);
    expect(res.headers.get("x-a2a-extensions")).to.equal(X402_EXT);
    const body = (await res.json()) as Record<string, any>;
    expect(body).to.include({ jsonrpc: "2.0", id: 7 });
    expect(body.result).to.include({ kind: "task" });
    expect(body.result.status.state).to.equal("input-required");
    expect(body.result.status.message).to.include({ kind: "message", role: "agent" });
    expect(body.result.status.message.metadata["x402.payment.status"]).to.equal("payment-required");

    const got = (await (await rpc({ jsonrpc: "2.0", id: "g", method: "tasks/get", params: { id: body.result.id, historyLength: 1 } })).json()) as Record<string, any>;
    expect(got.result.history).to.have.length(1);

    // Paid in the raw 0.3 shape: without `blocking` the answer waits for the deliverable (as 0.3 servers did);
    // with blocking: false it is the first snapshot, already showing the submitted payment.
    const buyer = await newBuyer(srv);
    const payer = new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account));
    const paidMessage = async (input: Record<string, unknown>, configuration?: Record<string, unknown>) => {
      const task = ((await (await rpc({ jsonrpc: "2.0", id: 8, method: "message/send", params: { message: { ...message, messageId: randomUUID(), parts: [{ kind: "data", data: { sku_id: "agent.trust-badge", input } }] } } })).json()) as Record<string, any>).result;
      const payload = await payer.createPaymentPayload(task.status.message.metadata["x402.payment.required"]);
      const msg = { kind: "message", messageId: randomUUID(), role: "user", taskId: task.id, parts: [{ kind: "text", text: "paid" }], metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload } };
      return ((await (await rpc({ jsonrpc: "2.0", id: 9, method: "message/send", params: { message: msg, ...(configuration ? { configuration } : {}) } })).json()) as Record<string, any>).result;
    };
    const completed = await paidMessage({ subject: buyer.address });
    expect(completed.status.state).to.equal("completed");
    expect(completed.artifacts[0].parts[0]).to.deep.include({ kind: "data" });
    expect(completed.artifacts[0].parts[0].data).to.include({ subject: buyer.address });
    expect(completed.status.message.metadata["x402.payment.receipts"][0]).to.include({ success: true });
    const snapshot = await paidMessage({ subject: buyer.address, note: "second call" }, { blocking: false });
    expect(snapshot.status.state).to.equal("working");
    expect(snapshot.status.message.metadata["x402.payment.status"]).to.equal("payment-submitted");
    const finished = await pollTask(snapshot.id, (t) => t.status?.state === TaskState.TASK_STATE_COMPLETED);
    expect(finished.artifacts).to.have.length(1);
    const missing = (await (await rpc({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: randomUUID() } })).json()) as Record<string, any>;
    expect(missing.error.code).to.equal(-32001);
    const stream = (await (await rpc({ jsonrpc: "2.0", id: 2, method: "message/stream", params: { message } })).json()) as Record<string, any>;
    expect(stream.error.code).to.equal(-32004);
    const v1 = (await (await rpc({ jsonrpc: "2.0", id: 3, method: "SendMessage", params: {} }, { "a2a-version": "1.0" })).json()) as Record<string, any>;
    expect(v1.error.message).to.contain("not supported");
    expect((await fetch(`${srv.url}/a2a/jsonrpc`)).status).to.equal(405);
    expect((await fetch(`${srv.url}/a2a/requests/open`)).status).to.equal(200);
  });
});

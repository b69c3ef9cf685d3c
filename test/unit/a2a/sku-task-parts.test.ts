import { expect } from "chai";
import { Role, TaskState, type Message, type Part, type Task } from "@a2a-js/sdk";
import { paymentHeaderOf, paymentReplyOf, skuCallOf } from "../../../src/a2a/sku-call-message.js";
import { legacyStateName } from "../../../src/a2a/task-store.js";
import { applyTransition, lastChallengeOf, transitionOf } from "../../../src/a2a/task-updates.js";

const data = (value: unknown): Part => ({ content: { $case: "data", value }, mediaType: "", filename: "", metadata: undefined });
const text = (value: string): Part => ({ content: { $case: "text", value }, mediaType: "", filename: "", metadata: undefined });
const msg = (parts: Part[], metadata?: Record<string, unknown>): Message => ({ messageId: "m", contextId: "", taskId: "", role: Role.ROLE_USER, parts, metadata, extensions: [], referenceTaskIds: [] });
const task = (): Task => ({ id: "t1", contextId: "c1", status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: {} });

describe("A2A SKU call messages and task transitions", () => {
  it("reads the SKU and input from the first data part that names a sku_id", () => {
    expect(skuCallOf(msg([text("hi"), data({ other: 1 }), data({ sku_id: "agent.trust-badge", input: { subject: "x" } })]))).to.deep.equal({ ok: true, skuId: "agent.trust-badge", input: { subject: "x" } });
    expect(skuCallOf(msg([data({ sku_id: "agent.trust-badge" })]))).to.deep.equal({ ok: true, skuId: "agent.trust-badge", input: {} });
    expect(skuCallOf(msg([text("a badge please")]))).to.include({ ok: false });
    expect(skuCallOf(msg([data({ sku_id: 7 })]))).to.deep.equal({ ok: false, message: "sku_id must be a non-empty string" });
    expect(skuCallOf(msg([data({ sku_id: "a.b", input: [1] })]))).to.deep.equal({ ok: false, message: "input must be a JSON object" });
  });

  it("reads a payment, a declined payment, or nothing from the message metadata", () => {
    expect(paymentReplyOf(msg([], { "x402.payment.payload": { x402Version: 2 } }))).to.deep.equal({ kind: "payload", payload: { x402Version: 2 } });
    expect(paymentReplyOf(msg([], { "x402.payment.status": "payment-rejected" }))).to.deep.equal({ kind: "rejected" });
    expect(paymentReplyOf(msg([]))).to.deep.equal({ kind: "none" });
    expect(JSON.parse(Buffer.from(paymentHeaderOf({ a: 1 }), "base64").toString())).to.deep.equal({ a: 1 });
    expect(paymentHeaderOf("eyJhIjoxfQ==")).to.equal("eyJhIjoxfQ==");
  });

  it("names states the 0.3 way", () => {
    expect(legacyStateName(TaskState.TASK_STATE_INPUT_REQUIRED)).to.equal("input-required");
    expect(legacyStateName(TaskState.TASK_STATE_COMPLETED)).to.equal("completed");
    expect(legacyStateName(undefined)).to.equal("unspecified");
  });

  it("keeps every transition with its timestamp, and finishes a task with one message however often it is finished", () => {
    const t0 = task();
    const waiting = applyTransition(t0, { state: TaskState.TASK_STATE_INPUT_REQUIRED, text: "pay", message: { "x402.payment.status": "payment-required", "x402.payment.required": { x402Version: 2 } } }, new Date("2026-01-01T00:00:00Z"));
    expect(waiting.metadata!["svc.state_transitions"]).to.deep.equal([{ state: "input-required", timestamp: "2026-01-01T00:00:00.000Z", payment_status: "payment-required" }]);
    expect(waiting.history[0]!.extensions).to.have.length(1);
    expect(lastChallengeOf(waiting)).to.deep.equal({ x402Version: 2 });
    const done = applyTransition(waiting, { state: TaskState.TASK_STATE_COMPLETED, text: "done" });
    const twice = applyTransition(done, { state: TaskState.TASK_STATE_COMPLETED, text: "done" });
    expect(twice.history.map((m) => m.messageId)).to.deep.equal([waiting.history[0]!.messageId, "t1:completed"]);
    expect(transitionOf(done, { state: TaskState.TASK_STATE_WORKING, text: "w" }).status.message!.messageId).to.not.equal(transitionOf(done, { state: TaskState.TASK_STATE_WORKING, text: "w" }).status.message!.messageId);
  });
});

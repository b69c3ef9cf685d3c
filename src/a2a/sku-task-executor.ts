import type { IncomingHttpHeaders } from "node:http";
import { toJson, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskState, type Artifact, type Task } from "@a2a-js/sdk";
import { AgentEvent, STATE_HEADERS_KEY, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { CallServiceResponseSchema, type CallServiceResponse } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import { PaymentRequiredSchema } from "../../gen/svc/payment/v1/x402_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";
import type { Logger } from "../platform/log.js";
import { atomicToUsdText } from "../platform/money.js";
import { errorReason } from "../platform/rpc/errors.js";
import { toLegacyJson } from "../rest/legacy-json.js";
import { JURISDICTION_HEADER } from "../policy/jurisdiction.js";
import type { PaymentGate } from "../x402/payment-gate.js";
import { X402_HEADERS } from "../x402/wire.js";
import { paymentHeaderOf, paymentReplyOf, skuCallOf, type PaymentReply } from "./sku-call-message.js";
import { applyTransition, deliverableArtifact, lastChallengeOf, receiptsOf, transitionOf, type Transition } from "./task-updates.js";
import { SVC_META, X402_EXTENSION_URI, X402_META } from "./x402-extension.js";

// The A2A agent executor of SKU calls: a task per paid call, paid with the a2a-x402 extension through
// the one payment gate (same challenges, same exactly-once claim by payment nonce, same refusals).
//   new task        -> gate without payment -> input-required + x402.payment.required
//   payment message -> gate with the payload -> completed + deliverable artifact + receipts (sync)
//                                             -> working + svc.job_id (async; tasks/get polls the job)
//   refusals and failures -> failed (rejected for an insufficient subject), nothing charged

/** Request-scoped values the JSON-RPC front puts in the call context's state. */
export const BASE_URL_STATE_KEY = "svc.base_url";

/** Payment outcomes where the client should send the same payment again (nothing lost, nothing double-charged). */
const RETRY_SAME_PAYMENT = new Set(["settlement_unknown", "settlement_unrecorded", "payment_in_progress", "facilitator_unavailable"]);
const PAYMENT_REFUSED = new Set(["payment_invalid", "payment_failed", "payment_reused"]);

/** Publishes a task's transitions on the request's event bus, keeping its transition history. */
class TaskTransitions {
  constructor(private task: Task, private readonly bus: ExecutionEventBus) {}

  get current(): Task {
    return this.task;
  }

  move(t: Transition): void {
    const { status, metadata } = transitionOf(this.task, t);
    this.task = { ...this.task, status, metadata: { ...this.task.metadata, ...metadata } };
    this.bus.publish(AgentEvent.statusUpdate({ taskId: this.task.id, contextId: this.task.contextId, status, metadata }));
  }

  artifact(artifact: Artifact): void {
    this.bus.publish(AgentEvent.artifactUpdate({ taskId: this.task.id, contextId: this.task.contextId, artifact, append: false, lastChunk: true, metadata: undefined }));
  }
}

export interface SkuTaskExecutorDeps {
  gate: PaymentGate;
  log: Logger;
  publicBaseUrl: string | undefined;
}

export class SkuTaskExecutor implements AgentExecutor {
  constructor(private readonly d: SkuTaskExecutorDeps) {}

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    if (rc.context.requestedExtensions?.includes(X402_EXTENSION_URI)) rc.context.addActivatedExtension(X402_EXTENSION_URI);
    const call = rc.task ? undefined : skuCallOf(rc.userMessage);
    const reply = rc.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? paymentReplyOf(rc.userMessage) : undefined;
    const now = new Date().toISOString();
    // The call is fixed when the task starts: a payment on this task always buys this SKU with this input.
    let task: Task = rc.task ?? {
      id: rc.taskId,
      contextId: rc.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now },
      artifacts: [],
      history: [rc.userMessage],
      metadata: {
        ...(call?.ok ? { [SVC_META.skuId]: call.skuId, [SVC_META.input]: call.input } : {}),
        [SVC_META.transitions]: [{ state: "submitted", timestamp: now }],
      },
    };
    // A submitted payment shows at once, also to a non-blocking client reading the first snapshot.
    if (reply?.kind === "payload") task = applyTransition(task, { state: TaskState.TASK_STATE_WORKING, text: "payment received: verifying, running and settling", message: { [X402_META.status]: "payment-submitted" } });
    bus.publish(AgentEvent.task(task));
    const t = new TaskTransitions(task, bus);
    try {
      if (call && !call.ok) t.move({ state: TaskState.TASK_STATE_FAILED, text: `${call.message}; nothing was charged`, message: { [SVC_META.error]: { code: "invalid_request", message: call.message }, [SVC_META.charged]: false } });
      else if (call?.ok) await this.callGate(rc, t, call.skuId, call.input, undefined);
      else if (reply) await this.followUp(rc, t, reply);
      // Otherwise the task is not waiting for input (a running async job is read with tasks/get): it is answered as it is.
    } catch (err) {
      this.d.log.error({ err, taskId: rc.taskId }, "A2A task failed unexpectedly");
      t.move({ state: TaskState.TASK_STATE_FAILED, text: "internal error; nothing was charged", message: { [SVC_META.error]: { code: "internal_error", message: "internal error" } } });
    }
  }

  async cancelTask(): Promise<void> {
    // tasks/cancel is answered by the request handler from the stored task (only an unpaid task can be canceled).
  }

  /** A message on a task waiting for its payment. */
  private async followUp(rc: RequestContext, t: TaskTransitions, reply: PaymentReply): Promise<void> {
    const skuId = t.current.metadata?.[SVC_META.skuId] as string;
    const input = (t.current.metadata?.[SVC_META.input] ?? {}) as JsonObject;
    if (reply.kind === "rejected") {
      t.move({ state: TaskState.TASK_STATE_CANCELED, text: "payment declined by the client; nothing was charged", message: { [X402_META.status]: "payment-rejected", [SVC_META.charged]: false } });
      return;
    }
    // No payment in the message: the challenge is offered again.
    await this.callGate(rc, t, skuId, input, reply.kind === "payload" ? paymentHeaderOf(reply.payload) : undefined);
  }

  private async callGate(rc: RequestContext, t: TaskTransitions, skuId: string, input: JsonObject, paymentHeader: string | undefined): Promise<void> {
    const headers = (rc.context.state.get(STATE_HEADERS_KEY) ?? {}) as IncomingHttpHeaders;
    const one = (name: string) => {
      const v = headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    let receipt: string | undefined;
    let res: CallServiceResponse;
    try {
      res = await this.d.gate.call(
        {
          skuId,
          input,
          paymentHeader,
          authorization: one("authorization"),
          baseUrl: this.d.publicBaseUrl ?? (rc.context.state.get(BASE_URL_STATE_KEY) as string),
          jurisdiction: one(JURISDICTION_HEADER),
        },
        (name, value) => {
          if (name === X402_HEADERS.paymentResponse || name === X402_HEADERS.xPaymentResponse) receipt = value;
        },
      );
    } catch (err) {
      this.refused(t, ConnectError.from(err), paymentHeader !== undefined, receipt);
      return;
    }
    const receipts = receipt ? [...receiptsOf(t.current), decodeReceipt(receipt)] : receiptsOf(t.current);
    const paid = res.charged && receipt ? { [X402_META.status]: "payment-completed", [X402_META.receipts]: receipts } : {};
    const charged = { [SVC_META.charged]: res.charged, ...(res.reason ? { [SVC_META.reason]: res.reason } : {}) };
    const answer = toLegacyJson(CallServiceResponseSchema, res);
    switch (res.status) {
      case CallStatus.DELIVERED:
        t.artifact(deliverableArtifact(skuId, res.deliverable ?? {}, answer));
        t.move({ state: TaskState.TASK_STATE_COMPLETED, text: `${skuId} delivered`, message: { ...paid, ...charged }, task: { ...charged, ...(receipt ? { [X402_META.receipts]: receipts } : {}) } });
        return;
      case CallStatus.PENDING:
        t.move({
          state: TaskState.TASK_STATE_WORKING,
          text: `${skuId} accepted as job ${res.jobId}; read the task with tasks/get until it completes`,
          message: { ...paid, ...charged, [SVC_META.jobId]: res.jobId },
          task: { ...charged, [SVC_META.jobId]: res.jobId, ...(receipt ? { [X402_META.receipts]: receipts } : {}) },
        });
        return;
      case CallStatus.INSUFFICIENT_SUBJECT:
        t.move({ state: TaskState.TASK_STATE_REJECTED, text: res.reason, message: { [SVC_META.error]: { code: "insufficient_subject", message: res.reason }, [SVC_META.charged]: false } });
        return;
      default:
        t.move({ state: TaskState.TASK_STATE_FAILED, text: res.reason || "the call did not deliver", message: { [SVC_META.error]: { code: "service_failed", message: res.reason }, ...charged } });
    }
  }

  /** A refusal or failure from the gate: nothing was charged (an unknown settlement outcome asks for the same payment again). */
  private refused(t: TaskTransitions, err: ConnectError, paid: boolean, receipt: string | undefined): void {
    const reason = errorReason(err) ?? Code[err.code].toLowerCase();
    if (reason === "payment_required") {
      const required = err.findDetails(PaymentRequiredSchema).find((d) => d.x402Version === 2) ?? err.findDetails(PaymentRequiredSchema)[0]!;
      const price = required.accepts[0]?.amount;
      t.move({
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        text: `Payment is required${price ? `: ${atomicToUsdText(price)} USD` : ""}. Send a message on this task with the signed x402 PaymentPayload in metadata["${X402_META.payload}"].`,
        message: { [X402_META.status]: "payment-required", [X402_META.required]: toJson(PaymentRequiredSchema, required) },
      });
      return;
    }
    const failure = { code: reason, message: err.rawMessage, ...fieldsOf(err) };
    if (paid && RETRY_SAME_PAYMENT.has(reason)) {
      t.move({
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        text: `${err.rawMessage}. Send the same x402.payment.payload on this task again: it is settled at most once.`,
        message: { [X402_META.status]: "payment-required", [X402_META.required]: lastChallengeOf(t.current), [X402_META.error]: reason, [SVC_META.error]: failure },
      });
      return;
    }
    const settleFailure = receipt ? { [X402_META.receipts]: [...receiptsOf(t.current), decodeReceipt(receipt)] } : {};
    const payment = paid ? { [X402_META.status]: "payment-failed", [X402_META.error]: reason, ...settleFailure } : {};
    if (!PAYMENT_REFUSED.has(reason) && err.code !== Code.InvalidArgument) this.d.log.info({ reason, taskId: t.current.id }, "A2A SKU call refused");
    t.move({ state: TaskState.TASK_STATE_FAILED, text: err.rawMessage.includes("nothing was charged") ? err.rawMessage : `${err.rawMessage}; nothing was charged`, message: { ...payment, [SVC_META.error]: failure, [SVC_META.charged]: false } });
  }
}

function fieldsOf(err: ConnectError): { fields?: { field: string; description: string }[] } {
  const violations = err.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
  return violations.length ? { fields: violations.map((v) => ({ field: v.field, description: v.description })) } : {};
}

function decodeReceipt(header: string): unknown {
  return JSON.parse(Buffer.from(header, "base64").toString("utf8"));
}

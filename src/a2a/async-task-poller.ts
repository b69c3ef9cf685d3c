import { TaskState, type Task } from "@a2a-js/sdk";
import { Code, ConnectError } from "@connectrpc/connect";
import { GetServiceResultResponseSchema, type GetServiceResultResponse } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import type { Logger } from "../platform/log.js";
import { errorReason } from "../platform/rpc/errors.js";
import { toLegacyJson } from "../rest/legacy-json.js";
import type { DbTaskStore } from "./task-store.js";
import { applyTransition, deliverableArtifact, DELIVERABLE_ARTIFACT_ID, receiptsOf } from "./task-updates.js";
import { SVC_META, X402_META } from "./x402-extension.js";

// An async SKU's task stays `working` while its job runs; reading the task (tasks/get, or a message on
// it) polls the job through the same result RPC as `GET /v1/services/result/{job_id}` and moves the
// task to completed (deliverable artifact) or failed (the reason; the refund once it is on-chain).
// The move is a conditional update on the stored state, so concurrent readers finish a task once.

export type JobResultReader = (jobId: string) => Promise<GetServiceResultResponse>;

export class AsyncTaskPoller {
  constructor(
    private readonly store: DbTaskStore,
    private readonly readResult: JobResultReader,
    private readonly log: Logger,
  ) {}

  async refresh(taskId: string): Promise<void> {
    const task = await this.store.load(taskId);
    const jobId = task?.metadata?.[SVC_META.jobId];
    if (!task || typeof jobId !== "string") return;
    const state = task.status?.state;
    const refundPending = state === TaskState.TASK_STATE_FAILED && task.metadata?.[SVC_META.refundTxHash] === "pending";
    if (state !== TaskState.TASK_STATE_WORKING && !refundPending) return;
    let result: GetServiceResultResponse;
    try {
      result = await this.readResult(jobId);
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code !== Code.NotFound || state !== TaskState.TASK_STATE_WORKING) {
        this.log.warn({ err, taskId, jobId }, "could not read the job of an A2A task");
        return;
      }
      const reason = errorReason(e) ?? "job_not_found";
      await this.store.saveIfState(applyTransition(task, { state: TaskState.TASK_STATE_FAILED, text: e.rawMessage, message: { [SVC_META.error]: { code: reason, message: e.rawMessage } } }), TaskState.TASK_STATE_WORKING);
      return;
    }
    const next = refundPending ? this.refundUpdate(task, result) : this.finish(task, result);
    if (next) await this.store.saveIfState(next, state!);
  }

  private finish(task: Task, r: GetServiceResultResponse): Task | undefined {
    const skuId = r.skuId;
    const charged = task.metadata?.[SVC_META.charged] === true;
    const payment = charged ? { [X402_META.status]: "payment-completed", [X402_META.receipts]: receiptsOf(task) } : {};
    if (r.status === CallStatus.DELIVERED) {
      const artifact = deliverableArtifact(skuId, r.deliverable ?? {}, toLegacyJson(GetServiceResultResponseSchema, r));
      const done = applyTransition(task, { state: TaskState.TASK_STATE_COMPLETED, text: `${skuId} delivered (job ${r.jobId})`, message: payment });
      return { ...done, artifacts: [...(done.artifacts ?? []).filter((a) => a.artifactId !== DELIVERABLE_ARTIFACT_ID), artifact] };
    }
    if (r.status !== CallStatus.FAILED && r.status !== CallStatus.REFUNDED) return undefined;
    const refund = !charged ? {} : { [SVC_META.refundTxHash]: r.refundTxHash || "pending" };
    const text = `${skuId} failed (job ${r.jobId}): ${r.error}${charged ? "; the payment is refunded on-chain" : ""}`;
    return applyTransition(task, { state: TaskState.TASK_STATE_FAILED, text, message: { ...payment, ...refund, [SVC_META.error]: { code: "service_failed", message: r.error } }, task: refund });
  }

  /** A failed paid job's refund, once its transaction is known. */
  private refundUpdate(task: Task, r: GetServiceResultResponse): Task | undefined {
    if (!r.refundTxHash) return undefined;
    return { ...task, metadata: { ...task.metadata, [SVC_META.refundTxHash]: r.refundTxHash } };
  }
}

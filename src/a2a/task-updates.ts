import { randomUUID } from "node:crypto";
import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus } from "@a2a-js/sdk";
import { legacyStateName } from "./task-store.js";
import { SVC_META, X402_EXTENSION_URI, X402_META } from "./x402-extension.js";

// Building blocks of a task's life: agent status messages, the state-transition history kept in the
// task's metadata, and the deliverable artifact. Each transition adds one agent message to the task's
// history (its metadata names the state entered), so tasks/get with historyLength returns them.

export const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

export interface StateTransition {
  state: string;
  timestamp: string;
  payment_status?: string;
}

/** What a transition says: its text, and metadata for its status message and for the task. */
export interface Transition {
  state: TaskState;
  text: string;
  /** Status-message metadata (x402 keys, svc.error...). */
  message?: Record<string, unknown>;
  /** Task-metadata keys to set (svc.job_id...). */
  task?: Record<string, unknown>;
}

export const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "", metadata: undefined });
export const dataPart = (value: Record<string, unknown>): Part => ({ content: { $case: "data", value }, mediaType: "application/json", filename: "", metadata: undefined });

export function transitionsOf(task: Pick<Task, "metadata">): StateTransition[] {
  const list = task.metadata?.[SVC_META.transitions];
  return Array.isArray(list) ? (list as StateTransition[]) : [];
}

export function receiptsOf(task: Pick<Task, "metadata">): unknown[] {
  const list = task.metadata?.[X402_META.receipts];
  return Array.isArray(list) ? list : [];
}

/**
 * The status a transition enters and the task metadata after it. A terminal state's message id is
 * derived from the task, so two writers finishing the same task (a retried payment, two pollers)
 * leave one message in the history.
 */
export function transitionOf(task: Pick<Task, "id" | "contextId" | "metadata">, t: Transition, now = new Date()): { status: TaskStatus; metadata: Record<string, unknown> } {
  const state = legacyStateName(t.state);
  const timestamp = now.toISOString();
  const paymentStatus = t.message?.[X402_META.status];
  const entry: StateTransition = { state, timestamp, ...(typeof paymentStatus === "string" ? { payment_status: paymentStatus } : {}) };
  const message: Message = {
    messageId: TERMINAL.has(t.state) ? `${task.id}:${state}` : randomUUID(),
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [textPart(t.text)],
    metadata: { [SVC_META.state]: state, ...t.message },
    extensions: paymentStatus === undefined ? [] : [X402_EXTENSION_URI],
    referenceTaskIds: [],
  };
  return {
    status: { state: t.state, message, timestamp },
    metadata: { ...t.task, [SVC_META.transitions]: [...transitionsOf(task), entry] },
  };
}

/** Applies a transition to a stored task (for writers outside the SDK's event bus: the async poller). */
export function applyTransition(task: Task, t: Transition, now = new Date()): Task {
  const { status, metadata } = transitionOf(task, t, now);
  const history = task.history ?? [];
  return {
    ...task,
    status,
    metadata: { ...task.metadata, ...metadata },
    history: history.some((m) => m.messageId === status.message!.messageId) ? history : [...history, status.message!],
  };
}

export const DELIVERABLE_ARTIFACT_ID = "deliverable";

/** The deliverable as a data part; the rest of the call's answer (trust envelope, payment proof...) as artifact metadata. */
export function deliverableArtifact(skuId: string, deliverable: Record<string, unknown>, answer: Record<string, unknown>): Artifact {
  const { deliverable: _omitted, ...rest } = answer;
  return {
    artifactId: DELIVERABLE_ARTIFACT_ID,
    name: `${skuId} deliverable`,
    description: `The deliverable of ${skuId}; its trust envelope (svc_trust) and payment proof are in the artifact metadata.`,
    parts: [dataPart(deliverable)],
    metadata: rest,
    extensions: [],
  };
}

/** The last x402 challenge offered on a task (kept in its history), to offer again. */
export function lastChallengeOf(task: Pick<Task, "history" | "status">): unknown {
  const messages = [task.status?.message, ...[...(task.history ?? [])].reverse()];
  return messages.find((m) => m?.metadata?.[X402_META.required] !== undefined)?.metadata?.[X402_META.required];
}

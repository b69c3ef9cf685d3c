import { Task, TaskState, type ListTasksRequest, type ListTasksResponse } from "@a2a-js/sdk";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server";
import { LessThan, type DataSource } from "typeorm";
import { A2aTaskEntity } from "./a2a-task.entity.js";
import { SVC_META } from "./x402-extension.js";

// The A2A task store in the service's database, so a task paid in one request (or on another server
// process) is found by the next. Task ids are unguessable UUIDs: like a job id on
// `/v1/services/result/{job_id}`, knowing the id is what gives access to the task.

/** A task state in its A2A 0.3 spelling (`TASK_STATE_INPUT_REQUIRED` -> `input-required`). */
export function legacyStateName(state: TaskState | undefined): string {
  const name = TaskState[state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? "TASK_STATE_UNKNOWN";
  return name.replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}

const PURGE_EVERY_MS = 10 * 60_000;
/** A task still waiting for its payment after a day is dropped (a payment on it would re-quote anyway). */
const UNPAID_RETENTION_MS = 86_400_000;

export class DbTaskStore implements TaskStore {
  private lastPurge = 0;

  /** `retentionMs`: tasks untouched for longer are deleted (checked at most every ten minutes, on a new task). */
  constructor(private readonly ds: DataSource, private readonly retentionMs: number) {}

  async load(taskId: string, _context?: ServerCallContext): Promise<Task | undefined> {
    const row = await this.ds.manager.findOneBy(A2aTaskEntity, { taskId });
    return row ? Task.fromJSON(JSON.parse(row.taskJson)) : undefined;
  }

  async save(task: Task, _context?: ServerCallContext): Promise<void> {
    const now = new Date();
    const columns = this.columns(task, now);
    const updated = await this.ds.manager.update(A2aTaskEntity, { taskId: task.id }, columns);
    if (updated.affected) return;
    try {
      await this.ds.manager.insert(A2aTaskEntity, { taskId: task.id, createTime: now, ...columns });
    } catch (err) {
      // Another writer inserted it first: update that row instead.
      if (!(await this.ds.manager.update(A2aTaskEntity, { taskId: task.id }, columns)).affected) throw err;
      return;
    }
    await this.purgeOld(now);
  }

  /** Saves `task` only if the stored task is still in `expected` state; false if another writer moved it. */
  async saveIfState(task: Task, expected: TaskState): Promise<boolean> {
    const res = await this.ds.manager.update(A2aTaskEntity, { taskId: task.id, state: legacyStateName(expected) }, this.columns(task, new Date()));
    return Boolean(res.affected);
  }

  async list(_params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    // A2A 0.3 has no tasks/list over JSON-RPC; tasks are read one by one with tasks/get.
    throw new UnsupportedOperationError("tasks/list is not offered");
  }

  private columns(task: Task, now: Date) {
    const meta = task.metadata ?? {};
    return {
      contextId: task.contextId,
      state: legacyStateName(task.status?.state),
      skuId: typeof meta[SVC_META.skuId] === "string" ? (meta[SVC_META.skuId] as string) : null,
      jobId: typeof meta[SVC_META.jobId] === "string" ? (meta[SVC_META.jobId] as string) : null,
      taskJson: JSON.stringify(Task.toJSON(task)),
      updateTime: now,
    };
  }

  private async purgeOld(now: Date): Promise<void> {
    if (now.getTime() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now.getTime();
    await this.ds.manager.delete(A2aTaskEntity, { updateTime: LessThan(new Date(now.getTime() - this.retentionMs)) });
    await this.ds.manager.delete(A2aTaskEntity, { state: "input-required", updateTime: LessThan(new Date(now.getTime() - UNPAID_RETENTION_MS)) });
  }
}

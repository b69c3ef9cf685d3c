import { TaskState, type AgentCard, type CancelTaskRequest, type GetTaskRequest, type Message, type SendMessageRequest, type Task } from "@a2a-js/sdk";
import { TaskNotCancelableError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import { DefaultRequestHandler, type ServerCallContext } from "@a2a-js/sdk/server";
import type { AsyncTaskPoller } from "./async-task-poller.js";
import type { SkuTaskExecutor } from "./sku-task-executor.js";
import type { DbTaskStore } from "./task-store.js";
import { applyTransition } from "./task-updates.js";
import { X402_META } from "./x402-extension.js";

// The SDK's request handler over the database task store, with what SKU calls add: a task is read
// fresh (its async job polled) before tasks/get and before a message on it, and only a task still
// waiting for its payment can be canceled (a paid call cannot be taken back).

export class SkuRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly tasks: DbTaskStore,
    executor: SkuTaskExecutor,
    private readonly poller: AsyncTaskPoller,
  ) {
    // No event bus outlives its request: a task waiting for payment is resumed from the store, on any process.
    super(card, tasks, executor, undefined, undefined, undefined, undefined, undefined, { keepBusAliveStates: [] });
  }

  override async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    if (params.id) await this.poller.refresh(params.id);
    return super.getTask(params, context);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    if (params.message?.taskId) await this.poller.refresh(params.message.taskId);
    return super.sendMessage(params, context);
  }

  override async cancelTask(params: CancelTaskRequest, _context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.tasks.load(params.id) : undefined;
    if (!task) throw new TaskNotFoundError(`Task not found: ${params.id}`);
    if (task.status?.state === TaskState.TASK_STATE_CANCELED) return task;
    if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) throw new TaskNotCancelableError(`Task ${task.id} is not waiting for a payment and cannot be canceled`);
    const canceled = applyTransition(task, { state: TaskState.TASK_STATE_CANCELED, text: "canceled by the client before payment; nothing was charged", message: { [X402_META.status]: "payment-rejected" } });
    if (!(await this.tasks.saveIfState(canceled, TaskState.TASK_STATE_INPUT_REQUIRED))) throw new TaskNotCancelableError(`Task ${task.id} changed state; read it again`);
    return canceled;
  }
}

import { expect } from "chai";
import { randomUUID } from "node:crypto";
import type { DataSource } from "typeorm";
import { Role, TaskState, type Task } from "@a2a-js/sdk";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { DbTaskStore } from "../../../src/a2a/task-store.js";
import { A2aTaskEntity } from "../../../src/a2a/a2a-task.entity.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

const task = (state: TaskState): Task => ({
  id: randomUUID(),
  contextId: randomUUID(),
  status: { state, message: undefined, timestamp: new Date().toISOString() },
  artifacts: [{ artifactId: "deliverable", name: "d", description: "", parts: [{ content: { $case: "data", value: { n: 1, nested: { ok: true } } }, mediaType: "application/json", filename: "", metadata: undefined }], metadata: { sku_id: "a.b" }, extensions: [] }],
  history: [{ messageId: "m1", contextId: "", taskId: "", role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: "hi" }, mediaType: "", filename: "", metadata: undefined }], metadata: { "x402.payment.payload": { x402Version: 2 } }, extensions: [], referenceTaskIds: [] }],
  metadata: { "svc.sku_id": "a.b", "svc.job_id": "job_1" },
});

describe("A2A task store (database)", () => {
  let ds: DataSource;
  before(async () => {
    ds = await openDataSource(testDatabaseConfig());
  });
  after(() => ds.destroy());

  it("round-trips a task with its parts, metadata and history, and keeps the SKU and job columns", async () => {
    const store = new DbTaskStore(ds, 86_400_000);
    const t = task(TaskState.TASK_STATE_WORKING);
    await store.save(t);
    expect(await store.load(t.id)).to.deep.equal(t);
    expect(await ds.manager.findOneByOrFail(A2aTaskEntity, { taskId: t.id })).to.include({ state: "working", skuId: "a.b", jobId: "job_1" });
    expect(await store.load(randomUUID())).to.equal(undefined);
  });

  it("saves conditionally on the stored state, so one of two writers finishes a task", async () => {
    const store = new DbTaskStore(ds, 86_400_000);
    const t = task(TaskState.TASK_STATE_WORKING);
    await store.save(t);
    const done = { ...t, status: { ...t.status!, state: TaskState.TASK_STATE_COMPLETED } };
    expect(await store.saveIfState(done, TaskState.TASK_STATE_WORKING)).to.equal(true);
    expect(await store.saveIfState(done, TaskState.TASK_STATE_WORKING)).to.equal(false);
    expect((await store.load(t.id))!.status!.state).to.equal(TaskState.TASK_STATE_COMPLETED);
  });

  it("drops tasks past their retention, and unpaid tasks after a day", async () => {
    const old = task(TaskState.TASK_STATE_COMPLETED);
    const unpaid = task(TaskState.TASK_STATE_INPUT_REQUIRED);
    const fresh = task(TaskState.TASK_STATE_COMPLETED);
    const seed = new DbTaskStore(ds, 86_400_000 * 30);
    for (const t of [old, unpaid, fresh]) await seed.save(t);
    await ds.manager.update(A2aTaskEntity, { taskId: old.id }, { updateTime: new Date(Date.now() - 86_400_000 * 31) });
    await ds.manager.update(A2aTaskEntity, { taskId: unpaid.id }, { updateTime: new Date(Date.now() - 86_400_000 * 2) });
    await new DbTaskStore(ds, 86_400_000 * 30).save(task(TaskState.TASK_STATE_SUBMITTED)); // a new task triggers the purge
    expect(await seed.load(old.id)).to.equal(undefined);
    expect(await seed.load(unpaid.id)).to.equal(undefined);
    expect(await seed.load(fresh.id)).to.not.equal(undefined);
  });
});

import { In, LessThan, type DataSource, type EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { ServiceJobEntity, type JobState } from "./service-job.entity.js";

// The async job queue in the database. A job is `queued` while its payment settles, `pending` once
// paid, and claimed by a worker with a guarded update under a lease (a dead worker's lease expires).
// The guarded update is the claim on both dialects: losing the race just means another worker won.

export const MAX_ATTEMPTS = 3;

export class JobQueue {
  constructor(private readonly ds: DataSource, private readonly leaseMs = 60_000) {}

  async create(manager: EntityManager, job: { skuId: string; paymentId: string; payer: string; inputJson: string; manifestJson?: string }): Promise<string> {
    const jobId = newId("job");
    await manager.insert(ServiceJobEntity, { ...job, manifestJson: job.manifestJson ?? null, jobId, state: "queued", resultJson: null, error: null, attempts: 0, leaseUntil: null, createTime: new Date(), finishTime: null });
    return jobId;
  }

  async move(jobId: string, from: readonly JobState[], to: JobState, patch: Partial<ServiceJobEntity> = {}, manager: EntityManager = this.ds.manager): Promise<boolean> {
    const res = await manager.update(ServiceJobEntity, { jobId, state: In([...from]) }, { ...patch, state: to });
    return (res.affected ?? 0) === 1;
  }

  get(jobId: string, manager: EntityManager = this.ds.manager): Promise<ServiceJobEntity | null> {
    return manager.findOneBy(ServiceJobEntity, { jobId });
  }

  /** Claims the oldest claimable job, if any. */
  async claim(): Promise<ServiceJobEntity | undefined> {
    const now = new Date();
    const candidates = await this.ds.manager.find(ServiceJobEntity, {
      where: [{ state: "pending" }, { state: "running", leaseUntil: LessThan(now) }],
      order: { createTime: "ASC" },
      take: 5,
    });
    for (const c of candidates) {
      const res = await this.ds.manager
        .createQueryBuilder()
        .update(ServiceJobEntity)
        .set({ state: "running", leaseUntil: new Date(now.getTime() + this.leaseMs), attempts: () => "attempts + 1" })
        .where("job_id = :id", { id: c.jobId })
        .andWhere("(state = 'pending' OR (state = 'running' AND lease_until < :now))", { now })
        .execute();
      if ((res.affected ?? 0) === 1) return (await this.get(c.jobId))!;
    }
    return undefined;
  }
}

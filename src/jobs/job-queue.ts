import { In, LessThan, type DataSource, type EntityManager } from "typeorm";
import { newId } from "../platform/ids.js";
import { runInTransaction } from "../platform/db/transaction.js";
import { anyRow, columnValue } from "../platform/db/shared-sql.js";
import { currentRequestId } from "../platform/request-context.js";
import { ServiceJobEntity, type JobState } from "./service-job.entity.js";

// The async job queue in the database. A job is `queued` while its payment settles, `pending` once
// paid, and claimed by a worker with a guarded update under a lease (a dead worker's lease expires).
// The guarded update is the claim on both dialects: losing the race just means another worker won.

export const MAX_ATTEMPTS = 3;

/** Pending, or running under a lease that has run out (its worker died). */
const CLAIMABLE = "(j.state = 'pending' OR (j.state = 'running' AND j.lease_until < :now))";
/** The idle poller's lock-free look: is any job claimable (CLAIMABLE as one raw statement)? */
const ANY_CLAIMABLE = `SELECT 1 FROM service_jobs WHERE ${CLAIMABLE.replace(/j\./g, "").replace(":now", "?")} LIMIT 1`;

export class JobQueue {
  constructor(private readonly ds: DataSource, private readonly leaseMs = 60_000) {}

  async create(manager: EntityManager, job: { skuId: string; paymentId: string; payer: string; inputJson: string; manifestJson?: string; priority?: number }): Promise<string> {
    const jobId = newId("job");
    await manager.insert(ServiceJobEntity, { ...job, manifestJson: job.manifestJson ?? null, priority: job.priority ?? 0, requestId: currentRequestId() ?? null, jobId, state: "queued", resultJson: null, error: null, attempts: 0, leaseUntil: null, createTime: new Date(), finishTime: null });
    return jobId;
  }

  async move(jobId: string, from: readonly JobState[], to: JobState, patch: Partial<ServiceJobEntity> = {}, manager: EntityManager = this.ds.manager): Promise<boolean> {
    const res = await manager.update(ServiceJobEntity, { jobId, state: In([...from]) }, { ...patch, state: to });
    return (res.affected ?? 0) === 1;
  }

  get(jobId: string, manager: EntityManager = this.ds.manager): Promise<ServiceJobEntity | null> {
    return manager.findOneBy(ServiceJobEntity, { jobId });
  }

  /**
   * Claims the oldest claimable job, if any. On MySQL/MariaDB the candidate row is locked with
   * `FOR UPDATE SKIP LOCKED` inside the claiming transaction, so concurrent workers (threads or
   * `svc worker` processes) each take a different job without waiting on each other. SQLite runs one
   * writer at a time: there the guarded update alone decides.
   */
  async claim(): Promise<ServiceJobEntity | undefined> {
    // An idle worker polls every 200 ms: one lock-free look instead of a claiming transaction when nothing is due.
    const now = columnValue(this.ds, ServiceJobEntity, "leaseUntil", new Date());
    if (!(await anyRow(this.ds, ANY_CLAIMABLE, [now]))) return undefined;
    return this.ds.options.type === "better-sqlite3" ? this.claimGuarded() : this.claimSkipLocked();
  }

  private async claimSkipLocked(): Promise<ServiceJobEntity | undefined> {
    const now = new Date();
    // READ COMMITTED: no gap locks on the claim index, so claimers skip each other instead of deadlocking;
    // a deadlock that still happens (an index entry moved by a commit) retries the claim.
    return runInTransaction(this.ds, async (m) => {
      const row = await m
        .createQueryBuilder(ServiceJobEntity, "j")
        .where(CLAIMABLE, { now })
        .orderBy("j.priority", "DESC")
        .addOrderBy("j.create_time", "ASC")
        .limit(1)
        .setLock("pessimistic_write")
        .setOnLocked("skip_locked")
        .getOne();
      if (!row) return undefined;
      await m.update(ServiceJobEntity, { jobId: row.jobId }, { state: "running", leaseUntil: new Date(now.getTime() + this.leaseMs), attempts: () => "attempts + 1" });
      return (await m.findOneBy(ServiceJobEntity, { jobId: row.jobId }))!;
    }, "READ COMMITTED");
  }

  private async claimGuarded(): Promise<ServiceJobEntity | undefined> {
    const now = new Date();
    const candidates = await this.ds.manager.find(ServiceJobEntity, {
      where: [{ state: "pending" }, { state: "running", leaseUntil: LessThan(now) }],
      order: { priority: "DESC", createTime: "ASC" },
      take: 5,
    });
    for (const c of candidates) {
      const res = await this.ds.manager
        .createQueryBuilder()
        .update(ServiceJobEntity)
        .set({ state: "running", leaseUntil: new Date(now.getTime() + this.leaseMs), attempts: () => "attempts + 1" })
        .where("job_id = :id", { id: c.jobId })
        .andWhere(CLAIMABLE.replace(/j\./g, ""), { now })
        .execute();
      if ((res.affected ?? 0) === 1) return (await this.get(c.jobId))!;
    }
    return undefined;
  }

  /** Extends the lease of a job this worker is still running (the heartbeat); false when it is no longer running. */
  async renew(jobId: string): Promise<boolean> {
    const res = await this.ds.manager.update(ServiceJobEntity, { jobId, state: "running" }, { leaseUntil: new Date(Date.now() + this.leaseMs) });
    return (res.affected ?? 0) === 1;
  }

  /** How often a running job's lease is renewed: three heartbeats per lease. */
  get heartbeatMs(): number {
    return Math.max(10, Math.floor(this.leaseMs / 3));
  }

  /**
   * Deletes finished jobs (delivered, failed, refunded) that finished before `cutoff`, a bounded batch at
   * a time; their results are then gone (a poll answers 404 `result_expired`). Returns how many went.
   */
  async purgeFinished(cutoff: Date, batch = 500): Promise<number> {
    const old = await this.ds.manager.find(ServiceJobEntity, { select: { jobId: true }, where: { state: In(["delivered", "failed", "refunded"]), finishTime: LessThan(cutoff) }, take: batch });
    if (!old.length) return 0;
    const res = await this.ds.manager.delete(ServiceJobEntity, { jobId: In(old.map((j) => j.jobId)), state: In(["delivered", "failed", "refunded"]) });
    return res.affected ?? old.length;
  }
}

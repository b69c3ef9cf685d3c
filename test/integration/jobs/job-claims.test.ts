import { expect } from "chai";
import type { DataSource } from "typeorm";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { JobQueue } from "../../../src/jobs/job-queue.js";
import { ServiceJobEntity } from "../../../src/jobs/service-job.entity.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

const dialect = process.env.DATABASE_URL ? "MySQL/MariaDB: FOR UPDATE SKIP LOCKED" : "SQLite: single writer, guarded update";

describe(`job queue claims (${dialect})`, function () {
  this.timeout(60_000);
  // Separate data sources, as separate worker processes would have (own connection pools).
  const sources: DataSource[] = [];
  before(async () => {
    for (let i = 0; i < 4; i++) sources.push(await openDataSource(testDatabaseConfig()));
  });
  after(async () => {
    await Promise.all(sources.map((ds) => ds.destroy()));
  });

  const makeJobs = async (n: number, tag: string) => {
    const q = new JobQueue(sources[0]!);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = await q.create(sources[0]!.manager, { skuId: `claims.${tag}`, paymentId: `pay_${tag}_${i}`, payer: "0x0000000000000000000000000000000000000001", inputJson: "{}" });
      await q.move(id, ["queued"], "pending");
      ids.push(id);
    }
    return ids;
  };

  it("hands each pending job to exactly one of many parallel claimers", async () => {
    const ids = await makeJobs(40, "parallel");
    const claimed: string[] = [];
    // Sixteen claimers over four pools race until the queue is empty.
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const q = new JobQueue(sources[i % sources.length]!);
        for (;;) {
          const job = await q.claim();
          if (!job) return;
          if (job.skuId === "claims.parallel") claimed.push(job.jobId);
        }
      }),
    );
    expect(claimed.length).to.equal(ids.length);
    expect(new Set(claimed).size).to.equal(ids.length);
    expect(new Set(claimed)).to.deep.equal(new Set(ids));
    const rows = await sources[0]!.manager.findBy(ServiceJobEntity, { skuId: "claims.parallel" });
    expect(rows.every((r) => r.state === "running" && r.attempts === 1)).to.equal(true);
  });

  it("gives a job back when its worker's lease runs out, counting the attempt", async () => {
    const [id] = await makeJobs(1, "lease");
    const dying = new JobQueue(sources[1]!, 50);
    expect((await dying.claim())?.jobId).to.equal(id);
    // Not claimable while the lease holds (earlier tests may have left jobs of their own in this database)…
    for (let other = await new JobQueue(sources[2]!).claim(); other; other = await new JobQueue(sources[2]!).claim()) expect(other.jobId).not.to.equal(id);
    await new Promise((r) => setTimeout(r, 120));
    // …and claimable again once it has run out, as the worker died without finishing.
    const again = await new JobQueue(sources[2]!).claim();
    expect(again?.jobId).to.equal(id);
    expect(again?.attempts).to.equal(2);
    await new JobQueue(sources[0]!).move(id!, ["running"], "delivered", { finishTime: new Date(), leaseUntil: null });
  });

  it("keeps a job with a live worker: lease renewals (the heartbeat) hold it past the original lease", async () => {
    const [id] = await makeJobs(1, "heartbeat");
    const worker = new JobQueue(sources[1]!, 150);
    expect((await worker.claim())?.jobId).to.equal(id);
    for (let beat = 0; beat < 4; beat++) {
      await new Promise((r) => setTimeout(r, worker.heartbeatMs));
      expect(await worker.renew(id!)).to.equal(true);
    }
    // 200 ms past the original lease: still held, so no other worker gets it.
    for (let other = await new JobQueue(sources[2]!).claim(); other; other = await new JobQueue(sources[2]!).claim()) expect(other.jobId).not.to.equal(id);
    await worker.move(id!, ["running"], "delivered", { finishTime: new Date(), leaseUntil: null });
    expect(await worker.renew(id!)).to.equal(false);
  });

  it("deletes finished jobs past the retention time and keeps the rest", async () => {
    const q = new JobQueue(sources[0]!);
    const [oldDone, newDone, oldPending] = await makeJobs(3, "purge");
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    await q.move(oldDone!, ["pending"], "delivered", { finishTime: longAgo });
    await q.move(newDone!, ["pending"], "failed", { finishTime: new Date() });
    await sources[0]!.manager.update(ServiceJobEntity, { jobId: oldPending! }, { createTime: longAgo });
    const purged = await q.purgeFinished(new Date(Date.now() - 30 * 86_400_000));
    expect(purged).to.be.at.least(1);
    expect(await q.get(oldDone!)).to.equal(null);
    expect((await q.get(newDone!))?.state).to.equal("failed");
    expect((await q.get(oldPending!))?.state).to.equal("pending");
    await q.move(oldPending!, ["pending"], "failed", { finishTime: new Date() });
  });
});

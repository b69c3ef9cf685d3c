import { expect } from "chai";
import { In } from "typeorm";
import { JobQueue } from "../../../src/jobs/job-queue.js";
import { ServiceJobEntity } from "../../../src/jobs/service-job.entity.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer } from "../../fixtures/buyer.js";
import { registerAgent } from "../../fixtures/agents.js";
import { startCashuMint, type TestCashuMint } from "../../fixtures/cashu-mint.js";
import { call, paying, type Json } from "../../fixtures/markets.js";

// The Operator tier's priority queue, end to end: an agent buys the Operator plan with ecash at the
// markets API; async jobs its payout wallet pays for are claimed before older jobs of other payers.

describe("Operator tier: priority queue for async jobs", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let mint: TestCashuMint;
  before(async () => {
    mint = await startCashuMint();
    // No in-process workers: the test claims the queue itself to see the order.
    srv = await startTestServer({ WORKER_CONCURRENCY: "0", CASHU_MINTS: mint.url, SAFE_FETCH_ALLOW: mint.hostPort });
  });
  after(async () => {
    await srv.close();
    await mint.close();
  });

  it("claims the Operator's job first, then the others oldest first", async () => {
    const [regular, operatorBuyer, late] = await Promise.all([newBuyer(srv), newBuyer(srv), newBuyer(srv)]);
    const operator = await registerAgent(srv, { evm_address: operatorBuyer.address });
    const plan = await call(srv.url, "POST", "/subscriptions", { key: operator.api_key, body: { plan: "operator" }, headers: { "x-402-payment": await mint.mintToken(50_000) } });
    expect(plan.status, JSON.stringify(plan.body)).to.equal(201);

    const order = async (buyer: typeof regular) => {
      const res = await paying(buyer)(`${srv.url}/v1/services/agent.prehire-check`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: buyer.address }) });
      const body = (await res.json()) as Json;
      expect(body.status, JSON.stringify(body)).to.equal("pending");
      return body.job_id as string;
    };
    const first = await order(regular);
    const operatorJob = await order(operatorBuyer);
    const last = await order(late);
    const rows = await srv.ds.manager.findBy(ServiceJobEntity, { skuId: "agent.prehire-check" });
    expect(Object.fromEntries(rows.map((r) => [r.jobId, r.priority]))).to.deep.include({ [first]: 0, [operatorJob]: 1, [last]: 0 });

    const q = new JobQueue(srv.ds);
    const claimed: string[] = [];
    for (let job = await q.claim(); job; job = await q.claim()) if ([first, operatorJob, last].includes(job.jobId)) claimed.push(job.jobId);
    expect(claimed).to.deep.equal([operatorJob, first, last]);
    // Claimed here and never run: finished, so no later suite's worker (same database) runs them when their leases expire.
    await srv.ds.manager.update(ServiceJobEntity, { jobId: In(claimed) }, { state: "failed", error: "claimed by the test to observe the order", leaseUntil: null, finishTime: new Date() });
  });
});

import { expect } from "chai";
import { createHash } from "node:crypto";
import { AttestationEntity } from "../../../src/witness/witness.entity.js";
import { MarketJobEntity } from "../../../src/marketplace/marketplace.entity.js";
import { computeReputation, ReputationEngine } from "../../../src/reputation/reputation-engine.js";
import { SchedulerLeaseEntity } from "../../../src/reputation/reputation.entity.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { createLogger } from "../../../src/platform/log.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";
import { bearer, registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";

type Json = Record<string, any>;
const REASON = "The brief cites each claim and the sources match the cited passages.";

describe("witness program and reputation", function () {
  this.timeout(120_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${srv.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${srv.url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as Json };
  };

  /** A released job: posted, bid, accepted and completed with a deliverable. */
  async function releasedJob(capability = "research.brief", optout = false) {
    const requester = await registerAgent(srv);
    const provider = await registerAgent(srv);
    const rid = (await post("/a2a/requests", { capability_id: capability, task_description: "write a brief", witness_optout: optout }, { ...bearer(requester.api_key), "x-402-payment": requester.note })).body.request_id;
    const bid = (await post(`/a2a/requests/${rid}/bids`, { capability_id: capability, agent_name: provider.name, display_name: "brief" }, bearer(provider.api_key))).body;
    const job = (await post(`/a2a/bids/${bid.bid_id}/accept`, {}, bearer(requester.api_key))).body;
    const content = `# Brief ${job.job_id}\nclaims with citations`;
    await post(`/a2a/jobs/${job.job_id}/complete`, { result_summary: "brief delivered", deliverable_markdown: content }, bearer(provider.api_key));
    return { requester, provider, jobId: job.job_id as string, sha: createHash("sha256").update(content).digest("hex") };
  }
  async function witness(): Promise<RegisteredAgent> {
    const w = await registerAgent(srv);
    expect((await post("/a2a/witness/enroll", {}, bearer(w.api_key))).status).to.equal(200);
    return w;
  }
  const attest = (w: RegisteredAgent, jobId: string, sha: string, extra: Json = {}) => post(`/a2a/witness/${jobId}/attest`, { verdict: "pass", content_sha256: sha, reason: REASON, ...extra }, bearer(w.api_key));

  it("opens seats on released judgment work; a witness reads the deliverable and attests for credit", async () => {
    const { jobId, sha, provider } = await releasedJob();
    const w = await witness();
    const seats = (await get("/a2a/witness/seats")).body.seats as Json[];
    expect(seats.find((s) => s.job_id === jobId)).to.include({ content_sha256: sha, seats_open: 2 });
    const deliverable = await get(`/a2a/jobs/${jobId}/deliverable`, bearer(w.api_key));
    expect(deliverable.body.content_sha256).to.equal(sha);
    expect(createHash("sha256").update(deliverable.body.content_markdown).digest("hex")).to.equal(sha);
    const res = await attest(w, jobId, sha);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ verdict: "pass", credited: true, credit_quality: 0.6 });
    const proof = (await get(`/v1/proofs/${res.body.proof_id}`)).body.proof;
    expect(proof).to.include({ kind: 30110, task_class: "witness" });
    const rep = (await get(`/a2a/agents/${w.name}/reputation`)).body;
    expect(rep).to.include({ score: 37, badge: "registered" }); // the ladder's first step
    expect(rep.proofs).to.equal(1);
    expect((await get(`/a2a/agents/${provider.name}/reputation`)).body.score).to.equal(0); // not released to the provider yet: no payout
  });

  it("refuses each rule's violation", async () => {
    const { jobId, sha, requester, provider } = await releasedJob();
    const w1 = await witness();
    const w2 = await witness();
    const w3 = await witness();
    const outsider = await registerAgent(srv);
    expect((await attest(outsider, jobId, sha)).body.error.code).to.equal("not_enrolled");
    for (const party of [requester, provider]) {
      await post("/a2a/witness/enroll", {}, bearer(party.api_key));
      expect((await attest(party, jobId, sha)).body.error.code).to.equal("own_job");
    }
    expect((await attest(w1, jobId, sha, { reason: "too short" })).body.error.code).to.equal("reason_too_short");
    expect((await attest(w1, jobId, sha, { verdict: "maybe" })).status).to.equal(400);
    expect((await attest(w1, jobId, "0".repeat(64))).body.error.code).to.equal("hash_mismatch");
    expect((await attest(w1, jobId, sha)).status).to.equal(200);
    expect((await attest(w1, jobId, sha)).body.error.code).to.equal("already_attested");
    expect((await attest(w2, jobId, sha, { verdict: "fail" })).status).to.equal(200);
    expect((await attest(w3, jobId, sha)).body.error.code).to.equal("seats_full");

    const lookup = await releasedJob("lookup.price");
    expect((await attest(w3, lookup.jobId, lookup.sha)).body.error.code).to.equal("no_seat");
    const optout = await releasedJob("research.brief", true);
    expect((await attest(w3, optout.jobId, optout.sha)).body.error.code).to.equal("no_seat");
    const old = await releasedJob();
    await srv.ds.manager.update(MarketJobEntity, { jobId: old.jobId }, { completeTime: new Date(Date.now() - 169 * 3600_000) });
    expect((await attest(w3, old.jobId, old.sha)).body.error.code).to.equal("seat_window_closed");
    expect((await get("/a2a/witness/seats")).body.seats.map((s: Json) => s.job_id)).to.not.include.members([jobId, lookup.jobId, optout.jobId, old.jobId]);
  });

  it("credits at most 5 attestations per witness per day", async () => {
    const w = await witness();
    const results = [];
    for (let i = 0; i < 6; i++) {
      const { jobId, sha } = await releasedJob();
      results.push((await attest(w, jobId, sha)).body.credited);
    }
    expect(results).to.deep.equal([true, true, true, true, true, false]);
  });

  it("reproduces the witness ladder exactly through the engine: 12 jobs reach bronze, witnessing alone never passes 62", async () => {
    const ladder: [number, number][] = [[1, 37.0], [5, 44.9], [11, 49.9], [12, 50.5], [20, 54.0], [63, 62.0], [500, 62.0]];
    for (const [n, score] of ladder) {
      const agentId = `agent_ladder${String(n).padStart(5, "0")}x`.slice(0, 18);
      await srv.ds.manager.delete(AttestationEntity, { witnessAgentId: agentId });
      await srv.ds.manager.insert(
        AttestationEntity,
        Array.from({ length: n }, (_, i) => ({ attestationId: `att_ladder_${n}_${i}`, jobId: `mjob_ladder_${n}_${i}`, witnessAgentId: agentId, verdict: "pass", contentSha256: "0".repeat(64), reason: REASON, credited: true, day: "2026-01-01", proofId: `prf_ladder_${n}_${i}`, createTime: new Date() })),
      );
      const r = await computeReputation(srv.ds.manager, agentId);
      expect(r.total, `${n} jobs`).to.equal(score);
      expect(r.badge, `${n} jobs`).to.equal(n >= 12 ? "bronze" : "registered");
      await srv.ds.manager.delete(AttestationEntity, { witnessAgentId: agentId });
    }
  });

  it("runs the 15-minute refresh once across two servers sharing the database", async () => {
    const [a, b] = await Promise.all([openDataSource(testDatabaseConfig()), openDataSource(testDatabaseConfig())]);
    try {
      await a.manager.delete(SchedulerLeaseEntity, { name: "reputation_refresh" });
      const log = createLogger("silent");
      const ran = await Promise.all([new ReputationEngine(a, log, "server-a").tick(), new ReputationEngine(b, log, "server-b").tick()]);
      expect(ran.filter(Boolean)).to.have.length(1);
      expect(await new ReputationEngine(b, log, "server-b").tick()).to.equal(false); // the lease holds for the interval
      expect(await new ReputationEngine(a, log, "server-a").tick(new Date(Date.now() + 16 * 60_000))).to.equal(true); // and then passes on
    } finally {
      await Promise.all([a.destroy(), b.destroy()]);
    }
  });
});

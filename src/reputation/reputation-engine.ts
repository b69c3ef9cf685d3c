import { decidedDisputes } from "../skus/arbitration-dispute-settlement.js";
import { In, LessThan, type DataSource, type EntityManager } from "typeorm";
import { isUniqueViolation } from "../platform/db/errors.js";
import type { Logger } from "../platform/log.js";
import { AgentEntity } from "../registry/agent.entity.js";
import { MarketJobEntity, PayoutEntity } from "../marketplace/marketplace.entity.js";
import { AttestationEntity } from "../witness/witness.entity.js";
import { WITNESS_PROGRAM } from "../witness/witness-program.js";
import { ReputationScoreEntity, SchedulerLeaseEntity } from "./reputation.entity.js";
import { REPUTATION_REFRESH_SECONDS } from "./reputation-rules.js";
import { reputationScore, type ReputationScore } from "./reputation-score.js";

// The reputation engine: the spec's formula over verifiable work only (nothing is seeded).
//   proofs       = released marketplace jobs delivered as provider (delegation proofs, kind 30106)
//                + credited witness attestations (witness-participation proofs, kind 30110)
//   quality      = average of: each judged job's witness verdicts (pass 1, inconclusive 0.5, fail 0),
//                  and a flat 0.6 per credited attestation; unjudged jobs do not count
//   diversity    = distinct proof kinds among them; chain depth 1 (one delegation hop) for each.

const VERDICT_QUALITY: Record<string, number> = { pass: 1, inconclusive: 0.5, fail: 0 };
const TREND_LENGTH = 24;
export const REFRESH_LEASE = "reputation_refresh";

export interface AgentReputation extends ReputationScore {
  proofs: number;
  completedJobs: number;
  failedJobs: number;
  disputes: number;
}

export async function computeReputation(m: EntityManager, agentId: string): Promise<AgentReputation> {
  const released = await m.findBy(PayoutEntity, { providerAgentId: agentId, state: "released" });
  const jobIds = released.map((p) => p.jobId);
  const verdicts = jobIds.length ? await m.findBy(AttestationEntity, { jobId: In(jobIds) }) : [];
  const judged = new Map<string, number[]>();
  for (const v of verdicts) judged.set(v.jobId, [...(judged.get(v.jobId) ?? []), VERDICT_QUALITY[v.verdict] ?? 0]);
  const credited = await m.countBy(AttestationEntity, { witnessAgentId: agentId, credited: true });
  const qualities = [...[...judged.values()].map((q) => q.reduce((s, x) => s + x, 0) / q.length), ...Array<number>(credited).fill(WITNESS_PROGRAM.creditQuality)];
  const proofs = released.length + credited;
  const score = reputationScore(
    {
      proofs,
      averageQuality: qualities.length ? qualities.reduce((s, x) => s + x, 0) / qualities.length : 0,
      distinctKinds: (released.length > 0 ? 1 : 0) + (credited > 0 ? 1 : 0),
      averageChainDepth: proofs > 0 ? 1 : 0,
    },
    true,
  );
  const [completedJobs, failedJobs] = await Promise.all([
    m.countBy(MarketJobEntity, { providerAgentId: agentId, state: In(["completed", "paid"]) }),
    m.countBy(MarketJobEntity, { providerAgentId: agentId, state: "failed" }),
  ]);
  const allJobIds = (await m.find(MarketJobEntity, { select: { jobId: true }, where: { providerAgentId: agentId } })).map((j) => j.jobId);
  return { ...score, proofs, completedJobs, failedJobs, disputes: await decidedDisputes(m, allJobIds) };
}

export class ReputationEngine {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ds: DataSource, private readonly log: Logger, private readonly holder: string) {}

  /** Recomputes and stores one agent's reputation (after an event that changes it). */
  async refresh(agentId: string): Promise<AgentReputation> {
    const r = await computeReputation(this.ds.manager, agentId);
    const prior = await this.ds.manager.findOneBy(ReputationScoreEntity, { agentId });
    const trend = [...(prior ? (JSON.parse(prior.trendJson) as number[]) : []), r.total].slice(-TREND_LENGTH);
    const row = {
      score: r.total,
      componentsJson: JSON.stringify({ volume: r.volume, quality: r.quality, diversity: r.diversity, chain_depth: r.chain_depth }),
      badge: r.badge,
      proofs: r.proofs,
      completedJobs: r.completedJobs,
      failedJobs: r.failedJobs,
      disputes: r.disputes,
      trendJson: JSON.stringify(trend),
      computeTime: new Date(),
    };
    // Update, else insert (not save(): it opens an implicit transaction of its own).
    const updated = await this.ds.manager.update(ReputationScoreEntity, { agentId }, row);
    if ((updated.affected ?? 0) === 0) {
      await this.ds.manager.insert(ReputationScoreEntity, { agentId, ...row }).catch(async (err) => {
        if (!isUniqueViolation(err)) throw err;
        await this.ds.manager.update(ReputationScoreEntity, { agentId }, row);
      });
    }
    return r;
  }

  /** The stored reputation, computed on first use. */
  async current(agentId: string): Promise<ReputationScoreEntity> {
    return (await this.ds.manager.findOneBy(ReputationScoreEntity, { agentId })) ?? (await this.refresh(agentId), (await this.ds.manager.findOneBy(ReputationScoreEntity, { agentId }))!);
  }

  /**
   * The periodic refresh, once across a cluster: whoever takes the lease (a guarded update of a row
   * whose lease ran out) refreshes every agent and holds it for the refresh interval. True if it ran.
   */
  async tick(now = new Date()): Promise<boolean> {
    const until = new Date(now.getTime() + REPUTATION_REFRESH_SECONDS * 1000);
    let won = false;
    try {
      await this.ds.manager.insert(SchedulerLeaseEntity, { name: REFRESH_LEASE, holder: this.holder, leaseUntil: until });
      won = true;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const res = await this.ds.manager.update(SchedulerLeaseEntity, { name: REFRESH_LEASE, leaseUntil: LessThan(now) }, { holder: this.holder, leaseUntil: until });
      won = (res.affected ?? 0) === 1;
    }
    if (!won) return false;
    const agents = await this.ds.manager.find(AgentEntity, { select: { agentId: true } });
    for (const a of agents) await this.refresh(a.agentId);
    this.log.info({ agents: agents.length }, "reputation refreshed");
    return true;
  }

  start(pollMs = 60_000): void {
    const run = () => void this.tick().catch((err) => this.log.error({ err }, "reputation refresh failed"));
    run();
    this.timer = setInterval(run, pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

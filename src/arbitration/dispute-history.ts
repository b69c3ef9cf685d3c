import type { EntityManager } from "typeorm";
import { ProofRecordEntity } from "../proof/proof-record.entity.js";
import { PROOF_KIND } from "../proof/proof-recorder.js";

// Dispute history of an agent, read from the proof rail (kind 30129), so it is what anyone can verify.

export type DisputeHistory = {
  recorded: number;
  upheld: number;
  overturned: number;
  withdrawn: number;
  /** Newest first, at most 20. */
  recent: { dispute_id: string; job_id: string; verdict: string; proof_id: string; decided_at: string }[];
};

interface VerdictBody {
  dispute_id?: string;
  job_id?: string;
  provider?: string;
  provider_name?: string;
  provider_wallet?: string | null;
  verdict?: string;
}

/** Verdicts against a provider, matched by any of its identifiers (agent id, name, wallet), case-insensitively. */
export async function disputeHistory(manager: EntityManager, identifiers: (string | undefined)[]): Promise<DisputeHistory> {
  const ids = new Set(identifiers.filter((x): x is string => !!x).map((x) => x.toLowerCase()));
  const rows = await manager.find(ProofRecordEntity, { where: { kind: PROOF_KIND.adjudicatedOutcome }, order: { sequence: "DESC" } });
  const about = rows
    .map((r) => ({ r, b: JSON.parse(r.bodyJson) as VerdictBody }))
    .filter(({ b }) => [b.provider, b.provider_name, b.provider_wallet].some((x) => x && ids.has(x.toLowerCase())));
  const count = (v: string) => about.filter(({ b }) => b.verdict === v).length;
  return {
    recorded: about.length,
    upheld: count("upheld"),
    overturned: count("overturned"),
    withdrawn: count("withdrawn"),
    recent: about.slice(0, 20).map(({ r, b }) => ({ dispute_id: b.dispute_id ?? "", job_id: b.job_id ?? "", verdict: b.verdict ?? "", proof_id: r.proofId, decided_at: r.ts.toISOString() })),
  };
}

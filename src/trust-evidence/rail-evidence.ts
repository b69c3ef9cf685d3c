import { getAddress, isAddress } from "viem";
import { Like, type EntityManager } from "typeorm";
import { z } from "zod";
import { ProofRecordEntity } from "../proof/proof-record.entity.js";
import { PROOF_KIND } from "../proof/proof-recorder.js";

// What the public proof rail records about a registered agent: audit reports (kind 30105), security
// attestations about it (kind 30110, task class `security`), and settlement-proof attestations: its
// paid calls (kind 30120, as payer) and marketplace jobs it delivered or requested (kind 30106). Every
// count comes with the newest records, each citing its proof id, so anyone can fetch and verify them.

const RECENT = 10;

export const RailRefSchema = z.object({ proof_id: z.string(), kind: z.number(), settlement_ref: z.string().nullable(), ts: z.string(), url: z.string() });
export type RailRef = z.infer<typeof RailRefSchema>;

export interface AgentIdentifiers {
  agentId: string;
  name: string;
  wallet: string | null;
}

type Body = Record<string, unknown>;
const text = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : undefined);

/** Records of `kind` whose body `about` the agent; the LIKE only narrows the scan, `about` decides. */
async function recordsAbout(m: EntityManager, kind: number, needles: string[], about: (b: Body, r: ProofRecordEntity) => boolean): Promise<ProofRecordEntity[]> {
  const rows = await m.find(ProofRecordEntity, { where: needles.map((n) => ({ kind, bodyJson: Like(`%${n}%`) })), order: { sequence: "DESC" } });
  return rows.filter((r) => about(JSON.parse(r.bodyJson) as Body, r));
}

export const refOf = (r: ProofRecordEntity): RailRef => ({ proof_id: r.proofId, kind: r.kind, settlement_ref: r.settlementRef, ts: r.ts.toISOString(), url: `/v1/proofs/${r.proofId}` });

const summary = (rows: ProofRecordEntity[]) => ({ count: rows.length, recent: rows.slice(0, RECENT).map(refOf) });

export async function auditReportsAbout(m: EntityManager, a: AgentIdentifiers) {
  const ids = new Set([a.agentId.toLowerCase(), a.name.toLowerCase()]);
  // Audit reports name their target by agent name or id, at the top or inside `subject`.
  const rows = await recordsAbout(m, PROOF_KIND.auditReport, [a.agentId, a.name], (b) => {
    const subject = b.subject && typeof b.subject === "object" ? (b.subject as Body) : { agent_id: b.subject };
    return [b.target, b.agent_id, b.agent_name, b.subject_agent_id, subject.agent_id, subject.name].some((v) => ids.has(text(v) ?? ""));
  });
  return summary(rows);
}

export async function securityAttestationsAbout(m: EntityManager, a: AgentIdentifiers) {
  const rows = await recordsAbout(m, PROOF_KIND.audit, [a.agentId], (b, r) => r.taskClass === "security" && (b.subject_agent_id === a.agentId || b.actor_agent_id === a.agentId));
  return summary(rows);
}

export async function settlementProofsOf(m: EntityManager, a: AgentIdentifiers) {
  const wallet = a.wallet && isAddress(a.wallet, { strict: false }) ? getAddress(a.wallet) : undefined;
  const paid = wallet ? await recordsAbout(m, PROOF_KIND.settledOutcome, [wallet, wallet.toLowerCase()], (b) => text(b.payer) === wallet.toLowerCase()) : [];
  const jobs = await recordsAbout(m, PROOF_KIND.delegation, [a.agentId], (b) => b.provider === a.agentId || b.requester === a.agentId);
  const delivered = jobs.filter((r) => (JSON.parse(r.bodyJson) as Body).provider === a.agentId);
  const requested = jobs.filter((r) => (JSON.parse(r.bodyJson) as Body).requester === a.agentId);
  const all = [...paid, ...jobs].sort((x, y) => y.sequence - x.sequence);
  return {
    paid_calls: paid.length,
    jobs_delivered: delivered.length,
    jobs_requested: requested.length,
    recent: all.slice(0, RECENT).map(refOf),
  };
}

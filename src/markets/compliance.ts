import fs from "node:fs";
import { parse } from "yaml";
import { z } from "zod";

// The compliance check: a protocol's risk score out of 100 from documented factors shipped as data
// (src/markets/data/protocol-risk.yaml). Points per factor, summed (higher is riskier):
//   audits             (max 20)  0 audits 20, 1 audit 12, 2 audits 7, 3 or more 3
//   admin_key          (max 20)  immutable 0, dao_timelock 5, multisig_timelock 9, multisig 14, single_entity 20
//   oracle_design      (max 15)  none 0, decentralized 4, committee 6, amm_internal 8, centralized 15
//   age                (max 15)  5 years or more 1, 3 to 5 years 4, 1 to 3 years 8, under a year 15
//   incidents          (max 20)  each incident by loss: under 1M USD 3, under 10M 6, under 100M 10, 100M or more 14,
//                                plus 4 if it happened in the last 24 months; summed and capped at 20
//   tvl_concentration  (max 10)  low 2, medium 5, high 10
// tail_risk_pct = 0.5 + 24.5 * (risk_score / 100)^2, rounded to 2 decimals: a stylized yearly chance of a
// loss of 10 percent of TVL or more, from 0.5 percent (no risk points) to 25 percent (100 points).

const ADMIN = { immutable: 0, dao_timelock: 5, multisig_timelock: 9, multisig: 14, single_entity: 20 } as const;
const ORACLE = { none: 0, decentralized: 4, committee: 6, amm_internal: 8, centralized: 15 } as const;
const CONCENTRATION = { low: 2, medium: 5, high: 10 } as const;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

const ProtocolSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  name: z.string().min(1),
  aliases: z.array(z.string()).default([]),
  category: z.enum(["defi", "rwa", "macro", "crypto"]),
  audits: z.number().int().min(0),
  audits_note: z.string(),
  admin_key: z.enum(Object.keys(ADMIN) as [keyof typeof ADMIN]),
  admin_note: z.string(),
  oracle_design: z.enum(Object.keys(ORACLE) as [keyof typeof ORACLE]),
  oracle_note: z.string(),
  launched: z.string().regex(MONTH),
  incidents: z.array(z.object({ date: z.string().regex(MONTH), loss_usd: z.number().int().min(0), what: z.string().min(1) })),
  tvl_concentration: z.enum(Object.keys(CONCENTRATION) as [keyof typeof CONCENTRATION]),
  tvl_note: z.string(),
  sources: z.array(z.url()).min(1),
});
export type ProtocolFacts = z.infer<typeof ProtocolSchema>;

const DatasetSchema = z.object({ as_of: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), protocols: z.array(ProtocolSchema).min(1) });

export interface ComplianceDataset {
  asOf: string;
  protocols: ProtocolFacts[];
  /** Normalized name or alias -> protocol. */
  index: Map<string, ProtocolFacts>;
}

/** Lower-cased with every run of non-alphanumerics removed: how names and aliases are compared. */
export const protocolKey = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, "");

let cached: ComplianceDataset | undefined;

export function complianceDataset(): ComplianceDataset {
  if (cached) return cached;
  const data = DatasetSchema.parse(parse(fs.readFileSync(new URL("./data/protocol-risk.yaml", import.meta.url), "utf8")));
  const index = new Map<string, ProtocolFacts>();
  for (const p of data.protocols) {
    for (const key of [p.id, p.name, ...p.aliases].map(protocolKey)) {
      const prior = index.get(key);
      if (prior && prior.id !== p.id) throw new Error(`protocol-risk.yaml: ${key} names both ${prior.id} and ${p.id}`);
      index.set(key, p);
    }
  }
  cached = { asOf: data.as_of, protocols: data.protocols, index };
  return cached;
}

export function findProtocol(name: string): ProtocolFacts | undefined {
  return complianceDataset().index.get(protocolKey(name));
}

export interface FactorScore {
  name: string;
  value: string;
  points: number;
  max_points: number;
}

export interface ComplianceScore {
  protocol: string;
  name: string;
  risk_score: number;
  tail_risk_pct: number;
  factors: string[];
  factor_details: FactorScore[];
  data_as_of: string;
  sources: string[];
}

const monthsBetween = (fromYm: string, to: Date) => {
  const [y, m] = fromYm.split("-").map(Number) as [number, number];
  return (to.getUTCFullYear() - y) * 12 + (to.getUTCMonth() + 1 - m);
};

function incidentPoints(lossUsd: number): number {
  if (lossUsd < 1_000_000) return 3;
  if (lossUsd < 10_000_000) return 6;
  if (lossUsd < 100_000_000) return 10;
  return 14;
}

const usd = (n: number) => (n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M USD` : `${Math.round(n / 1000)}K USD`);

/** Scores a protocol's facts at `now` (the age and incident recency depend on it). */
export function scoreProtocol(p: ProtocolFacts, now: Date, asOf = complianceDataset().asOf): ComplianceScore {
  const ageMonths = monthsBetween(p.launched, now);
  const ageYears = ageMonths / 12;
  const agePoints = ageYears >= 5 ? 1 : ageYears >= 3 ? 4 : ageYears >= 1 ? 8 : 15;
  const auditPoints = p.audits === 0 ? 20 : p.audits === 1 ? 12 : p.audits === 2 ? 7 : 3;
  let incidents = 0;
  const incidentWords: string[] = [];
  for (const i of p.incidents) {
    const recent = monthsBetween(i.date, now) <= 24;
    incidents += incidentPoints(i.loss_usd) + (recent ? 4 : 0);
    incidentWords.push(`${i.date}: ${i.what} (${usd(i.loss_usd)}${recent ? ", within 24 months" : ""})`);
  }
  const details: FactorScore[] = [
    { name: "audits", value: `${p.audits >= 3 ? "3 or more" : p.audits} public audits: ${p.audits_note}`, points: auditPoints, max_points: 20 },
    { name: "admin_key", value: `${p.admin_key}: ${p.admin_note}`, points: ADMIN[p.admin_key], max_points: 20 },
    { name: "oracle_design", value: `${p.oracle_design}: ${p.oracle_note}`, points: ORACLE[p.oracle_design], max_points: 15 },
    { name: "age", value: `launched ${p.launched}, ${ageYears.toFixed(1)} years ago`, points: agePoints, max_points: 15 },
    { name: "incidents", value: p.incidents.length ? incidentWords.join("; ") : "no incident with losses on record", points: Math.min(20, incidents), max_points: 20 },
    { name: "tvl_concentration", value: `${p.tvl_concentration}: ${p.tvl_note}`, points: CONCENTRATION[p.tvl_concentration], max_points: 10 },
  ];
  const riskScore = details.reduce((s, d) => s + d.points, 0);
  const tail = Math.round((0.5 + 24.5 * (riskScore / 100) ** 2) * 100) / 100;
  return {
    protocol: p.id,
    name: p.name,
    risk_score: riskScore,
    tail_risk_pct: tail,
    factors: details.map((d) => `${d.name} +${d.points}/${d.max_points}: ${d.value}`),
    factor_details: details,
    data_as_of: asOf,
    sources: p.sources,
  };
}

/** The documented list, for the answer to an unknown protocol. */
export function knownProtocols(): string[] {
  return complianceDataset().protocols.map((p) => p.id);
}

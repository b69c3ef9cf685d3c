import { basisPoints, fromUnits, toUnits } from "./exact-decimal.js";

// A token-spend audit over usage records the buyer supplies: totals per model and scope, budget
// overruns (total, per model, per scope, with the record at which each budget was first exceeded in
// time order), records outside the allowed scopes or models, and anomalies by the documented rules
// below. Amounts are exact: integers of 10^-12 currency units, never floating-point sums.

export type Amount = string | number;

export interface UsageRecord {
  id?: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  cost: Amount;
  timestamp: string;
  scope: string;
}

export interface SpendPolicy {
  budget: { total: Amount; per_model?: Record<string, Amount>; per_scope?: Record<string, Amount>; period_start?: string; period_end?: string };
  allowed_scopes: string[];
  allowed_models?: string[];
  /** Published prices per model, per million tokens, to check each record's cost against. */
  prices?: Record<string, { input_per_million: Amount; output_per_million: Amount }>;
}

/** Thresholds of the anomaly rules. */
export const RATE_OUTLIER_FACTOR = 5n;
export const TOKEN_SPIKE_FACTOR = 10n;
export const PRICE_TOLERANCE_BPS = 100n;
export const MIN_RECORDS_FOR_BASELINE = 3;
export const CLOCK_SKEW_MS = 5 * 60_000;

export const ANOMALY_RULES = {
  duplicate_record: "a record repeats an earlier one: the same id, or the same model, scope, timestamp, tokens and cost",
  cost_without_tokens: "a cost above zero with zero tokens in and out",
  tokens_without_cost: "tokens used at a cost of zero (unpriced usage hides spend)",
  rate_outlier: `cost per token more than ${RATE_OUTLIER_FACTOR}x above or below the model's median cost per token (models with at least ${MIN_RECORDS_FOR_BASELINE} priced records)`,
  token_spike: `more than ${TOKEN_SPIKE_FACTOR}x the model's median tokens per record (models with at least ${MIN_RECORDS_FOR_BASELINE} records)`,
  price_mismatch: `cost differs by more than ${Number(PRICE_TOLERANCE_BPS) / 100}% from tokens x the model's published price (when prices are given)`,
  outside_period: "timestamp before period_start or after period_end of the budget",
  future_timestamp: `timestamp more than ${CLOCK_SKEW_MS / 60_000} minutes after the audit`,
} as const;
export type AnomalyRule = keyof typeof ANOMALY_RULES;

interface Row {
  index: number;
  id: string | null;
  model: string;
  scope: string;
  tokensIn: bigint;
  tokensOut: bigint;
  cost: bigint;
  at: Date;
  timestamp: string;
}

const ref = (r: Row) => ({ index: r.index, id: r.id });
const tokens = (r: Row) => r.tokensIn + r.tokensOut;

export function auditSpend(records: UsageRecord[], policy: SpendPolicy, now: Date) {
  const rows: Row[] = records.map((r, index) => ({
    index,
    id: r.id ?? null,
    model: r.model,
    scope: r.scope,
    tokensIn: BigInt(r.tokens_in),
    tokensOut: BigInt(r.tokens_out),
    cost: toUnits(r.cost),
    at: new Date(r.timestamp),
    timestamp: r.timestamp,
  }));
  // Time order decides where a budget was first exceeded; ties keep the order given.
  const chronological = [...rows].sort((a, b) => a.at.getTime() - b.at.getTime() || a.index - b.index);
  const allowedScopes = new Set(policy.allowed_scopes);
  const allowedModels = policy.allowed_models ? new Set(policy.allowed_models) : undefined;
  const spent = chronological.reduce((s, r) => s + r.cost, 0n);

  const group = (key: (r: Row) => string) => {
    const out = new Map<string, Row[]>();
    for (const r of chronological) out.set(key(r), [...(out.get(key(r)) ?? []), r]);
    return out;
  };
  const byModel = group((r) => r.model);
  const byScope = group((r) => r.scope);

  const overruns: { level: "total" | "model" | "scope"; key: string; budget: string; spent: string; over_by: string; exceeded_at: { index: number; id: string | null; timestamp: string } }[] = [];
  const checkBudget = (level: "total" | "model" | "scope", key: string, budget: bigint, list: Row[]) => {
    let running = 0n;
    for (const r of list) {
      running += r.cost;
      if (running > budget) {
        const total = list.reduce((s, x) => s + x.cost, 0n);
        overruns.push({ level, key, budget: fromUnits(budget), spent: fromUnits(total), over_by: fromUnits(total - budget), exceeded_at: { ...ref(r), timestamp: r.timestamp } });
        return;
      }
    }
  };
  const totalBudget = toUnits(policy.budget.total);
  checkBudget("total", "*", totalBudget, chronological);
  for (const [model, amount] of Object.entries(policy.budget.per_model ?? {})) checkBudget("model", model, toUnits(amount), byModel.get(model) ?? []);
  for (const [scope, amount] of Object.entries(policy.budget.per_scope ?? {})) checkBudget("scope", scope, toUnits(amount), byScope.get(scope) ?? []);

  const outOfScope = rows.flatMap((r) => [
    ...(allowedScopes.has(r.scope) ? [] : [{ ...ref(r), reason: "scope_not_allowed" as const, scope: r.scope, model: r.model, cost: fromUnits(r.cost) }]),
    ...(!allowedModels || allowedModels.has(r.model) ? [] : [{ ...ref(r), reason: "model_not_allowed" as const, scope: r.scope, model: r.model, cost: fromUnits(r.cost) }]),
  ]);

  return {
    totals: { records: rows.length, tokens_in: sum(rows, (r) => r.tokensIn).toString(), tokens_out: sum(rows, (r) => r.tokensOut).toString(), cost: fromUnits(spent) },
    budget: {
      total: fromUnits(totalBudget),
      spent: fromUnits(spent),
      remaining: fromUnits(totalBudget - spent),
      utilization_bps: basisPoints(spent, totalBudget),
      period_start: policy.budget.period_start ?? null,
      period_end: policy.budget.period_end ?? null,
    },
    by_model: [...byModel].map(([model, list]) => breakdown("model", model, list, spent, policy.budget.per_model?.[model], allowedModels ? allowedModels.has(model) : true)),
    by_scope: [...byScope].map(([scope, list]) => breakdown("scope", scope, list, spent, policy.budget.per_scope?.[scope], allowedScopes.has(scope))),
    overruns,
    out_of_scope: outOfScope,
    anomalies: anomalies(rows, byModel, policy, now),
    within_budget: overruns.length === 0,
    compliant: overruns.length === 0 && outOfScope.length === 0,
  };
}

function sum(rows: Row[], f: (r: Row) => bigint): bigint {
  return rows.reduce((s, r) => s + f(r), 0n);
}

function breakdown(kind: "model" | "scope", key: string, list: Row[], spent: bigint, budget: Amount | undefined, allowed: boolean) {
  const cost = sum(list, (r) => r.cost);
  const limit = budget === undefined ? undefined : toUnits(budget);
  return {
    [kind]: key,
    allowed,
    records: list.length,
    tokens_in: sum(list, (r) => r.tokensIn).toString(),
    tokens_out: sum(list, (r) => r.tokensOut).toString(),
    cost: fromUnits(cost),
    share_of_cost_bps: basisPoints(cost, spent),
    budget: limit === undefined ? null : fromUnits(limit),
    over_budget: limit !== undefined && cost > limit,
  } as Record<string, string | number | boolean | null>;
}

/** The lower median of a list under a comparator. */
function median<T>(list: T[], compare: (a: T, b: T) => number): T {
  return [...list].sort(compare)[Math.floor((list.length - 1) / 2)]!;
}

function anomalies(rows: Row[], byModel: Map<string, Row[]>, policy: SpendPolicy, now: Date) {
  const found: { rule: AnomalyRule; index: number; id: string | null; model: string; detail: string }[] = [];
  const flag = (rule: AnomalyRule, r: Row, detail: string) => found.push({ rule, ...ref(r), model: r.model, detail });

  const seenIds = new Map<string, number>();
  const seenContent = new Map<string, number>();
  for (const r of rows) {
    const content = [r.model, r.scope, r.at.getTime(), r.tokensIn, r.tokensOut, r.cost].join("|");
    const earlier = (r.id !== null ? seenIds.get(r.id) : undefined) ?? seenContent.get(content);
    if (earlier !== undefined) flag("duplicate_record", r, `repeats record ${earlier}`);
    if (r.id !== null && !seenIds.has(r.id)) seenIds.set(r.id, r.index);
    if (!seenContent.has(content)) seenContent.set(content, r.index);
    if (tokens(r) === 0n && r.cost > 0n) flag("cost_without_tokens", r, `cost ${fromUnits(r.cost)} for 0 tokens`);
    if (tokens(r) > 0n && r.cost === 0n) flag("tokens_without_cost", r, `${tokens(r)} tokens at cost 0`);
    const start = policy.budget.period_start ? new Date(policy.budget.period_start) : undefined;
    const end = policy.budget.period_end ? new Date(policy.budget.period_end) : undefined;
    if ((start && r.at < start) || (end && r.at > end)) flag("outside_period", r, `${r.timestamp} is outside ${policy.budget.period_start ?? "…"} to ${policy.budget.period_end ?? "…"}`);
    if (r.at.getTime() > now.getTime() + CLOCK_SKEW_MS) flag("future_timestamp", r, `${r.timestamp} is after the audit time ${now.toISOString()}`);
    const price = policy.prices?.[r.model];
    if (price) {
      // cost * 10^6 vs tokens_in * in + tokens_out * out (prices are per million tokens): all integers.
      const expected = r.tokensIn * toUnits(price.input_per_million) + r.tokensOut * toUnits(price.output_per_million);
      const actual = r.cost * 1_000_000n;
      const diff = actual > expected ? actual - expected : expected - actual;
      if (diff * 10_000n > expected * PRICE_TOLERANCE_BPS) flag("price_mismatch", r, `cost ${fromUnits(r.cost)}, published prices give ${fromUnits(expected / 1_000_000n)}`);
    }
  }

  for (const [model, list] of byModel) {
    const priced = list.filter((r) => tokens(r) > 0n && r.cost > 0n);
    if (priced.length >= MIN_RECORDS_FOR_BASELINE) {
      // Rates compared as fractions cost/tokens by cross-multiplication: exact.
      const m = median(priced, (a, b) => (a.cost * tokens(b) < b.cost * tokens(a) ? -1 : a.cost * tokens(b) > b.cost * tokens(a) ? 1 : 0));
      for (const r of priced) {
        const high = r.cost * tokens(m) > RATE_OUTLIER_FACTOR * m.cost * tokens(r);
        const low = RATE_OUTLIER_FACTOR * r.cost * tokens(m) < m.cost * tokens(r);
        if (high || low) flag("rate_outlier", r, `cost per token ${high ? "above" : "below"} ${RATE_OUTLIER_FACTOR}x the median of ${model} (record ${m.index})`);
      }
    }
    if (list.length >= MIN_RECORDS_FOR_BASELINE) {
      const m = tokens(median(list, (a, b) => (tokens(a) < tokens(b) ? -1 : tokens(a) > tokens(b) ? 1 : 0)));
      for (const r of list) if (m > 0n && tokens(r) > TOKEN_SPIKE_FACTOR * m) flag("token_spike", r, `${tokens(r)} tokens, median for ${model} is ${m}`);
    }
  }
  return found.sort((a, b) => a.index - b.index || a.rule.localeCompare(b.rule));
}

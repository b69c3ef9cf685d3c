import { getAddress } from "viem";
import type { DataSource } from "typeorm";
import { z } from "zod";
import { VENUES, type Venue, type VenueClient } from "../market-data/venues.js";
import { newId } from "../platform/ids.js";
import { evaluate, readingOf } from "../alerts/alert-evaluator.js";
import { AlertStore, eventOf } from "../alerts/alert-store.js";
import { PriceAlertEntity, PriceAlertEventEntity } from "../alerts/price-alert.entity.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// oracle.alert-generator: defines a price alert (pair, venue, condition above/below/pct-move,
// threshold, max data age), evaluates it once at once from the venue, stores it with the call's
// settlement (an alert whose payment never settles is never stored), and the server's scheduler
// evaluates it every ALERT_EVAL_INTERVAL_SECONDS until it fires or expires. A call with an
// `alert_id` instead returns that alert's state and history; only the wallet that created it may ask
// (checked before any charge). Creation fails without a charge when the venue cannot be read.

const PAIR = /^([A-Z0-9]{2,10})[-/]([A-Z0-9]{2,10})$/;
const DECIMAL = /^\d{1,18}(\.\d{1,18})?$/;
export const ALERT_ID = /^alert_[0-9a-z]{20}$/;
export const CONDITIONS = ["above", "below", "pct-move"] as const;

const Threshold = z.union([z.string().trim(), z.number().positive().transform((n) => String(n))]).refine((t) => DECIMAL.test(t) && /[1-9]/.test(t), "a positive decimal number (a price, or a percentage for pct-move)");

const Input = z
  .object({
    alert_id: z.string().trim().regex(ALERT_ID, "an alert id returned by an earlier call").optional(),
    pair: z.string().trim().toUpperCase().regex(PAIR, "pair like BTC-USD").optional(),
    venue: z.enum(VENUES).default("coinbase"),
    condition: z.enum(CONDITIONS).optional(),
    threshold: Threshold.optional(),
    max_data_age_seconds: z.number().int().min(1).max(86_400).default(300),
  })
  .loose()
  .superRefine((v, ctx) => {
    if (v.alert_id) {
      for (const f of ["pair", "condition", "threshold"] as const) {
        if (v[f] !== undefined) ctx.addIssue({ code: "custom", path: [f], message: "give alert_id alone to read an alert, or pair, condition and threshold to create one" });
      }
      return;
    }
    for (const f of ["pair", "condition", "threshold"] as const) {
      if (v[f] === undefined) ctx.addIssue({ code: "custom", path: [f], message: `required to create an alert (or give alert_id to read one)` });
    }
    if (v.condition === "pct-move" && v.threshold && Number(v.threshold) > 1000) ctx.addIssue({ code: "custom", path: ["threshold"], message: "a pct-move threshold is a percentage, at most 1000" });
  });
type Input = z.infer<typeof Input>;

const State = z.enum(["armed", "fired", "stale"]);
export const AlertGeneratorOutput = z.object({
  alert_id: z.string(),
  owner: z.string(),
  pair: z.string(),
  venue: z.enum(VENUES),
  condition: z.enum(CONDITIONS),
  threshold: z.string(),
  reference_price: z.string().nullable(),
  max_data_age_seconds: z.number().int(),
  state: State,
  fired_at: z.iso.datetime().nullable(),
  fired_price: z.string().nullable(),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  evaluating: z.boolean(),
  evaluation_interval_seconds: z.number(),
  evaluations: z.number().int(),
  last_evaluation: z.object({
    evaluated_at: z.iso.datetime().nullable(),
    price: z.string().nullable(),
    data_time: z.iso.datetime().nullable(),
    data_age_seconds: z.number().int().nullable(),
    source: z.object({ venue: z.enum(VENUES), endpoint: z.string(), read_at: z.iso.datetime() }).nullable(),
    error: z.string().nullable(),
  }),
  history: z.array(
    z.object({
      evaluation: z.number().int(),
      at: z.iso.datetime(),
      state: State,
      price: z.string().nullable(),
      data_time: z.iso.datetime().nullable(),
      endpoint: z.string().nullable(),
      note: z.string(),
    }),
  ),
  request: z.enum(["created", "lookup"]),
});

export interface AlertSettings {
  evalIntervalMs: number;
  maxPerPayer: number;
  ttlMs: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function alertJson(a: PriceAlertEntity, history: PriceAlertEventEntity[], settings: AlertSettings, now: Date, request: "created" | "lookup") {
  return {
    alert_id: a.alertId,
    owner: a.owner,
    pair: a.pair,
    venue: a.venue as Venue,
    condition: a.condition,
    threshold: a.threshold,
    reference_price: a.referencePrice,
    max_data_age_seconds: a.maxAgeSeconds,
    state: a.state,
    fired_at: iso(a.firedAt),
    fired_price: a.firedPrice,
    created_at: a.createTime.toISOString(),
    expires_at: a.expireTime.toISOString(),
    evaluating: a.state !== "fired" && a.expireTime > now,
    evaluation_interval_seconds: settings.evalIntervalMs / 1000,
    evaluations: a.evaluations,
    last_evaluation: {
      evaluated_at: iso(a.lastEvalTime),
      price: a.lastPrice,
      data_time: iso(a.lastDataTime),
      data_age_seconds: a.lastDataTime ? Math.max(0, Math.floor((now.getTime() - a.lastDataTime.getTime()) / 1000)) : null,
      source: a.lastEndpoint && a.lastReadTime ? { venue: a.venue as Venue, endpoint: a.lastEndpoint, read_at: a.lastReadTime.toISOString() } : null,
      error: a.lastError,
    },
    history: history.map((e) => ({ evaluation: e.evaluation, at: e.eventTime.toISOString(), state: e.state, price: e.price, data_time: iso(e.dataTime), endpoint: e.endpoint, note: e.note })),
    request,
  };
}

export function oracleAlertGenerator(ds: DataSource, venues: VenueClient, venueUrls: Record<Venue, string>, settings: AlertSettings): SkuHandler<Input> {
  const store = new AlertStore(ds);
  return {
    skuId: "oracle.alert-generator",
    poweredBy: "svc-alerts/scheduler",
    input: Input,
    output: AlertGeneratorOutput,
    upstreams: (v) => (v.alert_id ? [] : [venueUrls[v.venue]]),
    async precheck(v, manager) {
      if (v.alert_id && !(await store.get(manager, v.alert_id))) return `no alert ${v.alert_id}`;
      return undefined;
    },
    async authorize(v, payer, manager) {
      if (!v.alert_id) return undefined;
      const alert = await store.get(manager, v.alert_id);
      if (alert && alert.owner.toLowerCase() !== payer.toLowerCase()) return `alert ${v.alert_id} belongs to another wallet; only the wallet that created it may read it`;
      return undefined;
    },
    async run(v, ctx) {
      if (v.alert_id) {
        const alert = await store.get(ctx.manager, v.alert_id);
        if (!alert) throw new Error(`alert ${v.alert_id} disappeared`);
        return alertJson(alert, await store.history(ctx.manager, alert.alertId), settings, ctx.now, "lookup");
      }
      const owner = getAddress(ctx.payer);
      const live = await store.countLive(ctx.manager, owner, ctx.now);
      if (live >= settings.maxPerPayer) {
        throw new SkuRefusal("alert_limit_reached", `wallet ${owner} already holds ${live} live alerts, the most one wallet may hold (${settings.maxPerPayer}); wait for one to fire or expire`);
      }
      const [, base, quote] = PAIR.exec(v.pair!)!;
      // The first evaluation: a venue that cannot be read fails the call (nothing stored, nothing charged).
      const q = await venues.quote(v.venue, base!, quote!);
      const now = new Date();
      const reading = readingOf(q, now);
      const referencePrice = v.condition === "pct-move" ? q.price : null;
      const ev = evaluate({ state: "armed", condition: v.condition!, threshold: v.threshold!, referencePrice, maxAgeSeconds: v.max_data_age_seconds, lastDataTime: null }, reading, now);
      const alert = Object.assign(new PriceAlertEntity(), {
        alertId: newId("alert"),
        owner,
        paymentId: ctx.paymentId,
        pair: `${base}-${quote}`,
        venue: v.venue,
        condition: v.condition!,
        threshold: v.threshold!,
        referencePrice,
        maxAgeSeconds: v.max_data_age_seconds,
        state: ev.state,
        firedAt: ev.state === "fired" ? now : null,
        firedPrice: ev.state === "fired" ? q.price : null,
        lastPrice: q.price,
        lastDataTime: reading.ok ? reading.dataTime : null,
        lastReadTime: now,
        lastEndpoint: q.endpoint.slice(0, 512),
        lastEvalTime: now,
        lastError: null,
        evaluations: 1,
        createTime: now,
        expireTime: new Date(now.getTime() + settings.ttlMs),
        nextEvalTime: new Date(now.getTime() + settings.evalIntervalMs),
      });
      // Shown now, stored by commit with the settlement: an unpaid alert is never evaluated.
      const first = eventOf(alert.alertId, 1, now, ev, reading, "created: ");
      return alertJson(alert, [first], settings, now, "created");
    },
    async commit(manager, deliverable, ctx) {
      const d = AlertGeneratorOutput.parse(deliverable);
      if (d.request !== "created") return;
      const { alert, history } = rowsOf(d, ctx.paymentId, settings);
      await store.create(manager, alert, history[0]!);
    },
  };
}

const date = (s: string | null) => (s === null ? null : new Date(s));

/** The rows a creating call's deliverable describes: the alert and its first evaluation. */
function rowsOf(d: z.infer<typeof AlertGeneratorOutput>, paymentId: string, settings: AlertSettings) {
  const created = new Date(d.created_at);
  const last = d.last_evaluation;
  const alert = Object.assign(new PriceAlertEntity(), {
    alertId: d.alert_id,
    owner: d.owner,
    paymentId,
    pair: d.pair,
    venue: d.venue,
    condition: d.condition,
    threshold: d.threshold,
    referencePrice: d.reference_price,
    maxAgeSeconds: d.max_data_age_seconds,
    state: d.state,
    firedAt: date(d.fired_at),
    firedPrice: d.fired_price,
    lastPrice: last.price,
    lastDataTime: date(last.data_time),
    lastReadTime: date(last.source?.read_at ?? null),
    lastEndpoint: last.source?.endpoint ?? null,
    lastEvalTime: date(last.evaluated_at),
    lastError: last.error,
    evaluations: d.evaluations,
    createTime: created,
    expireTime: new Date(d.expires_at),
    nextEvalTime: new Date(created.getTime() + settings.evalIntervalMs),
  });
  const history = d.history.map((e) =>
    Object.assign(new PriceAlertEventEntity(), { eventId: newId("alev"), alertId: d.alert_id, evaluation: e.evaluation, eventTime: new Date(e.at), state: e.state, price: e.price, dataTime: date(e.data_time), endpoint: e.endpoint, note: e.note }),
  );
  return { alert, history };
}

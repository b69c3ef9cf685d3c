import type { JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "typeorm";
import type { z } from "zod";
import type { ProofKey } from "../proof/proof-recorder.js";
import { errors } from "../platform/rpc/errors.js";

// One interface for every SKU engine. The payment gate parses and prechecks before issuing a challenge
// (bad input and unresolvable subjects are never charged), then runs the engine, then settles.

export interface SkuContext {
  manager: EntityManager;
  /** Wallet that paid (the caller's identity). */
  payer: string;
  paymentId: string;
  now: Date;
  proofKey: ProofKey;
}

export interface SkuHandler<I = unknown> {
  readonly skuId: string;
  /** The engine's name, reported as `powered_by`. */
  readonly poweredBy: string;
  /** Input schema, published in the catalog as `x-input-schema`. */
  readonly input: z.ZodType<I>;
  /** Deliverable schema, published in the catalog as `x-output-schema` (the shape `run` returns). */
  readonly output: z.ZodType;
  /**
   * The upstreams (origin URLs or venue names) a call will reach; their circuit breakers are checked
   * before any charge (an open breaker refuses with 409 `circuit_open`).
   */
  upstreams?(input: I): string[] | Promise<string[]>;
  /** The content-trap scan of the call's input: on (refuse a match, 409 `content_trap`) unless "off". */
  readonly inputScan?: "refuse" | "off";
  /** Resolves the subject before any charge; a returned reason means `insufficient_subject`. */
  precheck?(input: I, manager: EntityManager): Promise<string | undefined>;
  /** Refuses a paying wallet before any charge (a returned reason means 403 `not_a_party`). */
  authorize?(input: I, payer: string, manager: EntityManager): Promise<string | undefined>;
  /**
   * Present on SKUs whose deliverable is decided by the operator: once paid, the job waits in `awaiting`
   * (no worker claims it) and this runs in the settlement's transaction.
   */
  awaitOperator?(manager: EntityManager, job: { jobId: string; payer: string; input: I; now: Date }): Promise<void>;
  /**
   * Writes the call's lasting effects (rows, proof records, notifications) from its deliverable. It runs
   * in the settlement's transaction (sync SKUs; also when the settlement is finalized by the reconciler
   * after a crash) or with the delivered job (async SKUs), so a call whose payment never settles leaves
   * nothing behind. `run` must therefore not write; it computes the deliverable (ids included).
   */
  commit?(manager: EntityManager, deliverable: JsonObject, ctx: SkuContext): Promise<void>;
  /**
   * Produces the deliverable; throws to fail the call (nothing is charged). Throwing a `SkuRefusal`
   * (a flagged target, an unusable page) answers 409 with its reason instead of 503 `service_failed`.
   */
  run(input: I, ctx: SkuContext): Promise<JsonObject>;
}

/** Validates a call body against a handler's schema; field errors become one 400 with violations. */
export function parseInput<I>(handler: SkuHandler<I>, body: JsonObject): I {
  const parsed = handler.input.safeParse(body);
  if (parsed.success) return parsed.data;
  const violations = parsed.error.issues.map((i) => ({ field: i.path.join(".") || "(body)", description: i.message }));
  throw errors.invalidArgument("invalid_input", `invalid input for ${handler.skuId}: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`, violations);
}

/** A refusal decided while running (e.g. the fetched target trips the content-trap scan): 409, never charged. */
export class SkuRefusal extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

/** Runs the engine and holds its deliverable to the published output schema: a mismatch fails the call (uncharged). */
export async function runEngine<I>(handler: SkuHandler<I>, input: I, ctx: SkuContext): Promise<JsonObject> {
  const deliverable = await handler.run(input, ctx);
  const checked = handler.output.safeParse(deliverable);
  if (!checked.success) {
    const where = checked.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(deliverable)"}: ${i.message}`).join("; ");
    throw new Error(`${handler.skuId} produced a deliverable outside its published output schema (${where})`);
  }
  return deliverable;
}

import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { LessThanOrEqual, type DataSource, type EntityManager } from "typeorm";
import { CallServiceResponseSchema } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { isDatabaseBusy, isDatabaseUnavailable } from "../platform/db/errors.js";
import { isDeadlock, runInTransaction } from "../platform/db/transaction.js";
import type { Logger } from "../platform/log.js";
import type { ProofKey } from "../proof/proof-recorder.js";
import type { SkuHandler } from "../skus/sku-handler.js";
import { X402PaymentEffectEntity } from "./payment-effect.entity.js";
import { X402PaymentEntity } from "./payment.entity.js";

// A settled payment's lasting effects (SkuHandler.commit) run inside the settlement's transaction, in
// a savepoint: when an effect throws, only the effect is rolled back, the payment is still recorded
// settled with its proof and ledger entry (the money moved on-chain), and the effect goes to the
// outbox (x402_payment_effects) to be retried by the reconciler until it lands, exactly once: a retry
// deletes the outbox row and commits the effect in one transaction.

const MAX_BACKOFF_MS = 10 * 60_000;
/** Errors that doom the whole transaction (the outer unit retries or fails): never queued as an effect failure. */
function dooms(err: unknown): boolean {
  return isDeadlock(err) || isDatabaseUnavailable(err) || isDatabaseBusy(err);
}

/** Runs `effect` in a savepoint of `m`'s transaction; on failure rolls it back and queues a retry. Returns whether it landed. */
export async function commitEffectOrQueue(m: EntityManager, paymentId: string, effect: () => Promise<void>, log: Logger): Promise<boolean> {
  const runner = m.queryRunner;
  if (!runner?.isTransactionActive) throw new Error("commitEffectOrQueue needs a transaction");
  // A raw savepoint, never released: the enclosing COMMIT ends it (MySQL/MariaDB and SQLite alike), which spares
  // the paid path TypeORM's RELEASE SAVEPOINT round trip. Only a failure needs it, to roll the effect back alone.
  await runner.query(`SAVEPOINT ${EFFECT_SAVEPOINT}`);
  try {
    await effect();
    return true;
  } catch (err) {
    if (dooms(err)) throw err;
    await runner.query(`ROLLBACK TO SAVEPOINT ${EFFECT_SAVEPOINT}`); // only the effect's writes go
    const now = new Date();
    await m.insert(X402PaymentEffectEntity, { paymentId, attempts: 1, lastError: errorText(err), nextAttemptTime: new Date(now.getTime() + backoffMs(1)), createTime: now });
    log.error({ err, paymentId }, "a settled payment's effect failed; the settlement is recorded and the effect is queued for retry");
    return false;
  }
}

/** The effect's savepoint; a later effect in the same transaction moves the name on (MySQL and SQLite both allow it). */
const EFFECT_SAVEPOINT = "svc_effect";

export interface EffectRetryDeps {
  ds: DataSource;
  handlers: ReadonlyMap<string, SkuHandler<any>>;
  proofKey: ProofKey;
  log: Logger;
}

/** Retries the queued effects that are due; returns how many landed. A failure reschedules with backoff. */
export async function retryDueEffects(d: EffectRetryDeps, now = new Date()): Promise<number> {
  const due = await d.ds.manager.find(X402PaymentEffectEntity, { where: { nextAttemptTime: LessThanOrEqual(now) }, order: { nextAttemptTime: "ASC" }, take: 100 });
  let landed = 0;
  for (const row of due) {
    try {
      const done = await runInTransaction(d.ds, async (m) => {
        // Deleting first takes the row: a concurrent retrier (another server) finds nothing to do.
        const res = await m.delete(X402PaymentEffectEntity, { paymentId: row.paymentId, attempts: row.attempts });
        if ((res.affected ?? 0) !== 1) return false;
        const payment = await m.findOneByOrFail(X402PaymentEntity, { paymentId: row.paymentId });
        const deliverable = fromJson(CallServiceResponseSchema, JSON.parse(payment.responseJson!)).deliverable as JsonObject | undefined;
        const handler = d.handlers.get(payment.skuId);
        // A server without this SKU's effect (a rolling deploy) must not drop it: throwing keeps the row.
        if (!handler?.commit || !deliverable) throw new Error(`no effect to run here for ${payment.skuId} (handler or deliverable missing)`);
        await handler.commit(m, deliverable, { manager: m, payer: payment.payer, paymentId: payment.paymentId, now: new Date(), proofKey: d.proofKey });
        return true;
      });
      if (done) {
        landed++;
        d.log.info({ paymentId: row.paymentId, attempts: row.attempts + 1 }, "a queued payment effect landed");
      }
    } catch (err) {
      const attempts = row.attempts + 1;
      await d.ds.manager
        .update(X402PaymentEffectEntity, { paymentId: row.paymentId, attempts: row.attempts }, { attempts, lastError: errorText(err), nextAttemptTime: new Date(Date.now() + backoffMs(attempts)) })
        .catch((rescheduleErr) => d.log.warn({ err: rescheduleErr, paymentId: row.paymentId }, "could not reschedule a queued payment effect"));
      d.log.error({ err, paymentId: row.paymentId, attempts }, "a queued payment effect failed again; retrying later");
    }
  }
  return landed;
}

/** How many effects are waiting (for health and metrics). */
export function pendingEffects(ds: DataSource): Promise<number> {
  return ds.manager.count(X402PaymentEffectEntity);
}

function backoffMs(attempts: number): number {
  return Math.min(1_000 * 2 ** (attempts - 1), MAX_BACKOFF_MS);
}

function errorText(err: unknown): string {
  return String((err as Error)?.message ?? err).slice(0, 500);
}

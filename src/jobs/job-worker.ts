import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import type { DataSource } from "typeorm";
import { CallServiceResponseSchema } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { CallStatus } from "../../gen/svc/payment/v1/payment_pb.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import type { Logger } from "../platform/log.js";
import type { ProofKey } from "../proof/proof-recorder.js";
import { runEngine, SkuRefusal, type SkuHandler } from "../skus/sku-handler.js";
import { trustEnvelopeProto } from "../x402/payment-gate.js";
import type { Refunder } from "../x402/refunds.js";
import type { PaymentStore } from "../x402/payment-store.js";
import type { X402PaymentEntity } from "../x402/payment.entity.js";
import { JobQueue, MAX_ATTEMPTS } from "./job-queue.js";
import { runInTransaction } from "../platform/db/transaction.js";
import type { ServiceJobEntity } from "./service-job.entity.js";
import { outsideRequestContext, runWithRequestContext } from "../platform/request-context.js";
import { withSpan } from "../platform/tracing/tracing.js";

// Runs paid async jobs. A job that keeps failing after its payment settled is refunded on-chain.

export interface WorkerDeps {
  ds: DataSource;
  jobs: JobQueue;
  store: PaymentStore;
  refunder: Refunder;
  skus: ReadonlyMap<string, SkuDefinition>;
  handlers: ReadonlyMap<string, SkuHandler<any>>;
  proofKey: ProofKey;
  log: Logger;
  concurrency: number;
  idleMs?: number;
  /** Finished jobs are deleted this long after they finish (results kept for a documented time). */
  retentionMs?: number;
  /** The policy manifest of a job that has none stored (created before manifests were kept). */
  manifest: (sku: SkuDefinition) => JsonObject;
  /** Told when a failed job's payment was refunded (the payments metric). */
  onRefunded?: () => void;
}

export class JobWorker {
  private running = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly d: WorkerDeps) {}

  private purgeTimer: NodeJS.Timeout | undefined;

  private started = false;

  start(): void {
    if (this.d.concurrency <= 0) return;
    this.started = true;
    this.tick();
    const retentionMs = this.d.retentionMs;
    if (retentionMs) {
      const purge = () => void this.d.jobs.purgeFinished(new Date(Date.now() - retentionMs)).then(
        (n) => n && this.d.log.info({ purged: n }, "expired job results deleted"),
        (err) => this.d.log.error({ err }, "job result purge failed"),
      );
      purge();
      this.purgeTimer = setInterval(purge, Math.min(retentionMs, 10 * 60_000));
      this.purgeTimer.unref();
    }
  }

  /** Wakes the worker now (after a job became claimable in this process). */
  nudge(): void {
    if (this.started && !this.stopped) {
      clearTimeout(this.timer);
      // Woken from a request: the polling loop must not inherit (and log under) that request's id.
      outsideRequestContext(() => this.tick());
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.purgeTimer);
    await Promise.allSettled([...this.inFlight]);
  }

  private tick(): void {
    this.timer = undefined;
    void this.fill().finally(() => {
      if (!this.stopped && !this.timer) this.timer = setTimeout(() => this.tick(), this.d.idleMs ?? 200);
    });
  }

  private async fill(): Promise<void> {
    while (!this.stopped && this.running < this.d.concurrency) {
      const job = await this.d.jobs.claim().catch((err) => void this.d.log.error({ err }, "job claim failed"));
      if (!job) return;
      this.running++;
      // The job runs in the context of the request that created it: its log lines carry that request id.
      const p = runWithRequestContext({ requestId: job.requestId ?? `job:${job.jobId}`, jobId: job.jobId }, () =>
        withSpan("job.run", { "svc.job_id": job.jobId, "svc.sku_id": job.skuId, "svc.attempt": job.attempts }, () => this.process(job)),
      )
        .catch((err) => this.d.log.error({ err, jobId: job.jobId }, "async job processing failed"))
        .finally(() => {
        this.running--;
        this.inFlight.delete(p);
      });
      this.inFlight.add(p);
    }
  }

  private async process(job: ServiceJobEntity): Promise<void> {
    // A job whose lease ran out after its last attempt goes straight to the refund: never a 4th run.
    if (job.attempts > MAX_ATTEMPTS) return this.refund(job, job.error ?? "attempts exhausted");
    const sku = this.d.skus.get(job.skuId)!;
    const handler = this.d.handlers.get(job.skuId)!;
    // A comped job has no payment: nothing was charged, so nothing is refunded if it fails.
    const payment = await this.d.store.get(job.paymentId);
    // The lease is renewed while the engine runs (LLM panels can take minutes): only a dead worker loses it.
    const heartbeat = setInterval(() => void this.d.jobs.renew(job.jobId).catch((err) => this.d.log.warn({ err, jobId: job.jobId }, "lease renewal failed")), this.d.jobs.heartbeatMs);
    try {
      await this.attempt(job, sku, handler, payment);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async attempt(job: ServiceJobEntity, sku: SkuDefinition, handler: SkuHandler<any>, payment: X402PaymentEntity | null): Promise<void> {
    try {
      const ctx = { manager: this.d.ds.manager, payer: job.payer, paymentId: job.paymentId, now: new Date(), proofKey: this.d.proofKey };
      const deliverable = await runEngine(handler, JSON.parse(job.inputJson), ctx);
      const result = payment?.responseJson
        ? fromJson(CallServiceResponseSchema, JSON.parse(payment.responseJson))
        : create(CallServiceResponseSchema, { skuId: job.skuId, jobId: job.jobId, pollUrl: `/v1/services/result/${job.jobId}`, poweredBy: handler.poweredBy, charged: false });
      result.status = CallStatus.DELIVERED;
      result.deliverable = deliverable;
      result.svcTrust = trustEnvelopeProto(deliverable, job.manifestJson ? JSON.parse(job.manifestJson) : this.d.manifest(sku));
      // The job's lasting effects are written with its delivery: a job that lost its lease writes nothing.
      const delivered = await runInTransaction(this.d.ds, async (m) => {
        if (!(await this.d.jobs.move(job.jobId, ["running"], "delivered", { resultJson: JSON.stringify(toJson(CallServiceResponseSchema, result)), finishTime: new Date(), leaseUntil: null }, m))) return false;
        await handler.commit?.(m, deliverable, { ...ctx, manager: m });
        return true;
      });
      if (delivered) this.d.log.info({ skuId: job.skuId, attempt: job.attempts }, "async job delivered");
    } catch (err) {
      this.d.log.warn({ err, jobId: job.jobId, attempt: job.attempts }, "async job attempt failed");
      // A refusal's reason code leads the job's error, so a poller can tell `no_captions` from a crash.
      const message = err instanceof SkuRefusal ? `${err.reason}: ${err.message}` : String((err as Error).message);
      // A refusal (e.g. the target trips the content-trap scan) will not change on a retry.
      if (job.attempts < MAX_ATTEMPTS && !(err instanceof SkuRefusal)) {
        await this.d.jobs.move(job.jobId, ["running"], "pending", { error: message.slice(0, 500), leaseUntil: null });
        return;
      }
      if (!payment) {
        await this.d.jobs.move(job.jobId, ["running"], "failed", { error: message.slice(0, 500), finishTime: new Date(), leaseUntil: null });
        return;
      }
      await this.refund(job, message);
    }
  }

  private async refund(job: ServiceJobEntity, reason: string): Promise<void> {
    // Out of the claimable states first: no other worker runs or refunds this job again.
    const error = `failed after ${Math.min(job.attempts, MAX_ATTEMPTS)} attempts: ${reason}`.slice(0, 500);
    if (!(await this.d.jobs.move(job.jobId, ["running"], "refunding", { error, leaseUntil: null }))) return;
    try {
      const tx = await this.d.refunder.refund(job.paymentId);
      this.d.log.info({ jobId: job.jobId, refundTx: tx }, "async job failed; payment refunded");
      this.d.onRefunded?.();
    } catch (err) {
      // The job stays `refunding` and the payment `refunding`: resumed at the next start.
      this.d.log.error({ err, jobId: job.jobId }, "async job failed and the refund is not complete yet");
    }
  }
}

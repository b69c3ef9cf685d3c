import { encodeFunctionData, parseSignature, type Address, type Hex, type TransactionReceipt } from "viem";
import { DEV_USDC, SETTLEMENT_BATCHER } from "../chain/artifacts.js";
import type { TransactionSender } from "../chain/tx-sender.js";
import type { Logger } from "../platform/log.js";
import type { Authorization } from "./eip3009.js";

// Collects the built-in facilitator's settlements for a short window and sends them as one
// SettlementBatcher.settle transaction (each authorization in its own try/catch on-chain), so the
// chain's transactions-per-second no longer caps payments-per-second and gas per payment drops.
// A window that closes with a single item sends it directly to the token (cheaper, identical to the
// unbatched path; its batch index is null). Every caller gets back the one receipt and its own index.
// Eager (the default), it batches like a group commit: a settlement that finds nothing in flight is sent
// at once (with whatever arrived in the same turn of the event loop), and the ones arriving while a
// transaction is in flight go together as soon as it is mined, or when the window closes, whichever is
// first. Light load then pays no window, and heavy load still fills batches.

/** Gas for transferWithAuthorization on a USDC-like token, with headroom (measured ~70k). */
export const SETTLE_GAS = 150_000n;
/** Gas of a batch: the batcher's per-item cap (ITEM_GAS, 200k) plus event and loop overhead per item. */
const BATCH_BASE_GAS = 80_000n;
const BATCH_ITEM_GAS = 235_000n;

export interface BatchingOptions {
  /** The SettlementBatcher contract. */
  batcher: Address;
  /** How long the first settlement of a batch waits for others; 0 disables batching. */
  windowMs: number;
  /** A batch is sent as soon as it holds this many settlements. */
  max: number;
  /** Send at once when no transaction of this queue is in flight (else wait out the window); default true. */
  eager?: boolean;
}

export interface BatchItem {
  auth: Authorization;
  signature: Hex;
  /** Runs once per broadcast hash with this item's index (null when sent alone). */
  onSubmitted?: (hash: Hex, batchIndex: number | null) => Promise<void> | void;
}

export interface SentItem {
  receipt: TransactionReceipt;
  /** Index in the batch; null when the transaction settled this authorization alone. */
  batchIndex: number | null;
}

type Pending = BatchItem & { resolve(v: SentItem): void; reject(e: unknown): void };

function vrs(signature: Hex) {
  const sig = parseSignature(signature);
  return { v: Number(sig.v ?? 27n + BigInt(sig.yParity)), r: sig.r, s: sig.s };
}

/** The calldata of a lone transferWithAuthorization (v, r, s form: FiatTokenV2 and later). */
export function transferWithAuthorizationData(auth: Authorization, signature: Hex): Hex {
  const { v, r, s } = vrs(signature);
  return encodeFunctionData({
    abi: DEV_USDC.abi,
    functionName: "transferWithAuthorization",
    args: [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, v, r, s],
  });
}

export class SettlementBatchQueue {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  /** Transactions sent by flush() whose receipts have not come back yet. */
  private inFlight = 0;

  constructor(
    private readonly sender: TransactionSender,
    private readonly token: Address,
    private readonly opts: BatchingOptions,
    private readonly log?: Logger,
  ) {}

  /** Sends `item` alone (window 0) or with the others that arrive within the window. */
  submit(item: BatchItem): Promise<SentItem> {
    if (this.opts.windowMs <= 0 || this.opts.max <= 1) return this.sendAlone(item);
    return new Promise<SentItem>((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject });
      if (this.queue.length >= this.opts.max) this.flush();
      else if (this.inFlight === 0 && this.opts.eager !== false) this.soon ??= setImmediate(() => this.flush());
      else this.timer ??= setTimeout(() => this.flush(), this.opts.windowMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    clearImmediate(this.soon);
    this.timer = undefined;
    this.soon = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.inFlight++;
    const run = batch.length === 1 ? this.sendAlone(batch[0]!).then((r) => [r]) : this.sendBatch(batch);
    run
      .then(
        (results) => batch.forEach((p, i) => p.resolve(results[i]!)),
        (err) => batch.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        // What queued up behind this transaction has waited long enough: it goes now (eager).
        if (--this.inFlight === 0 && this.queue.length && this.opts.eager !== false) this.flush();
      });
  }

  private async sendAlone(item: BatchItem): Promise<SentItem> {
    const data = transferWithAuthorizationData(item.auth, item.signature);
    const hashes = recorder((hash) => item.onSubmitted?.(hash, null));
    const receipt = await this.sender.send({ to: this.token, data, gas: SETTLE_GAS }, hashes.onSubmitted);
    await hashes.recorded(); // a hash that could not be recorded: as before, the caller learns the outcome is unknown
    return { receipt, batchIndex: null };
  }

  private async sendBatch(batch: Pending[]): Promise<SentItem[]> {
    const items = batch.map(({ auth, signature }) => ({ ...auth, ...vrs(signature) }));
    const data = encodeFunctionData({ abi: SETTLEMENT_BATCHER.abi, functionName: "settle", args: [this.token, items] });
    const gas = BATCH_BASE_GAS + BATCH_ITEM_GAS * BigInt(batch.length);
    const hashes = recorder(async (hash) => {
      // Each payment records the hash with its own index; one failing write does not stop the others
      // (reconcile finds an unrecorded settlement through AuthorizationUsed).
      const done = await Promise.allSettled(batch.map((p, i) => p.onSubmitted?.(hash, i)));
      for (const r of done) if (r.status === "rejected") this.log?.warn({ err: r.reason, hash }, "could not record a batched settlement hash yet");
    });
    const receipt = await this.sender.send({ to: this.opts.batcher, data, gas }, hashes.onSubmitted);
    await hashes.recorded();
    this.log?.debug({ tx: receipt.transactionHash, items: batch.length }, "settled a batch");
    return batch.map((_, i) => ({ receipt, batchIndex: i }));
  }
}

/**
 * Records each broadcast hash (the payments' crash-recovery pointer) while the sender already waits for
 * the receipt, instead of before: `recorded()` is awaited before any caller learns the outcome, so a
 * payment is finalized only after its hash write finished, and a crash in between leaves the same
 * state as before (`settling`, found by the reconciler through AuthorizationUsed).
 */
function recorder(record: (hash: Hex) => Promise<void> | void) {
  const writes: Promise<void>[] = [];
  return {
    onSubmitted: (hash: Hex): void => {
      const write = Promise.resolve().then(() => record(hash));
      write.catch(() => undefined); // awaited (and reported) by recorded()
      writes.push(write);
    },
    recorded: () => Promise.all(writes),
  };
}

/** The batch index a facilitator reported in a SettleResponse's `extra.batchIndex`; null when settled alone. */
export function batchIndexOf(settled: { extra?: { [key: string]: unknown } }): number | null {
  const v = settled.extra?.batchIndex;
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}

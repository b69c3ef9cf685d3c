import type { Address, Chain, Hex, LocalAccount, PublicClient, TransactionReceipt } from "viem";
import type { Logger } from "../platform/log.js";

// Sends transactions from one key under concurrency without nonce collisions or stalls:
// - nonces are handed out in order by one in-process counter (re-synced from the chain on error);
// - one watcher polls the receipts of every outstanding transaction in a single JSON-RPC batch;
// - a transaction not mined within `resendAfterMs` is re-sent with the same nonce and fees raised
//   by a quarter (a node may park it behind a stale fee), until `timeoutMs`.

export interface SendRequest {
  to: Address;
  data: Hex;
  gas: bigint;
}

export interface SenderOptions {
  resendAfterMs: number;
  timeoutMs: number;
  pollMs: number;
  log: Logger;
}

export class SendTimeoutError extends Error {
  constructor(readonly hashes: Hex[]) {
    super(`transaction not mined in time (${hashes.join(", ")})`);
  }
}

type Waiter = { resolve(r: TransactionReceipt): void };

export class TransactionSender {
  private nextNonce: number | undefined;
  private nonceQueue: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Map<Hex, Waiter[]>();
  private timer: NodeJS.Timeout | undefined;
  private feeCache: { at: number; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | undefined;

  constructor(
    private readonly client: PublicClient,
    private readonly account: LocalAccount,
    private readonly chain: Chain,
    private readonly opts: SenderOptions,
  ) {}

  get address(): Address {
    return this.account.address;
  }

  /** Sends and waits for the receipt. `onSubmitted` runs once the first hash is known. */
  async send(req: SendRequest, onSubmitted?: (hash: Hex) => Promise<void> | void): Promise<TransactionReceipt> {
    const nonce = await this.allocateNonce();
    let fees = await this.fees();
    const hashes: Hex[] = [];
    const deadline = Date.now() + this.opts.timeoutMs;
    for (;;) {
      const hash = await this.broadcast(req, nonce, fees, hashes);
      if (hashes.length === 0) await onSubmitted?.(hash);
      if (!hashes.includes(hash)) hashes.push(hash);
      const receipt = await this.waitForAny(hashes, Math.min(this.opts.resendAfterMs, deadline - Date.now()));
      if (receipt) return receipt;
      if (Date.now() >= deadline) throw new SendTimeoutError(hashes);
      this.opts.log.warn({ nonce, hashes }, "transaction not mined in time; re-sending with higher fees");
      fees = { maxFeePerGas: (fees.maxFeePerGas * 5n) / 4n + 1n, maxPriorityFeePerGas: (fees.maxPriorityFeePerGas * 5n) / 4n + 1n };
    }
  }

  private async broadcast(req: SendRequest, nonce: number, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }, earlier: Hex[]): Promise<Hex> {
    const signed = await this.account.signTransaction({
      chainId: this.chain.id,
      type: "eip1559",
      nonce,
      to: req.to,
      data: req.data,
      gas: req.gas,
      ...fees,
    });
    try {
      return await this.client.sendRawTransaction({ serializedTransaction: signed });
    } catch (err) {
      const text = String((err as Error).message).toLowerCase();
      // An earlier broadcast of this nonce was mined or is pending: keep waiting for it.
      if (earlier.length && (text.includes("nonce too low") || text.includes("already known") || text.includes("underpriced"))) {
        return earlier[earlier.length - 1]!;
      }
      // This nonce was never used: hand it back so the sequence has no gap, then fail this send.
      await this.resyncNonce();
      throw err;
    }
  }

  private allocateNonce(): Promise<number> {
    const next = this.nonceQueue.then(async () => {
      if (this.nextNonce === undefined) {
        this.nextNonce = await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
      }
      return this.nextNonce++;
    });
    this.nonceQueue = next.catch(() => undefined);
    return next;
  }

  private async resyncNonce(): Promise<void> {
    await (this.nonceQueue = this.nonceQueue.then(async () => {
      this.nextNonce = await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
    }).catch(() => (this.nextNonce = undefined)));
  }

  private async fees() {
    const now = Date.now();
    if (!this.feeCache || now - this.feeCache.at > 2_000) {
      const est = await this.client.estimateFeesPerGas();
      // Headroom for base-fee rises between estimate and inclusion.
      this.feeCache = { at: now, maxFeePerGas: est.maxFeePerGas * 2n, maxPriorityFeePerGas: est.maxPriorityFeePerGas };
    }
    return { maxFeePerGas: this.feeCache.maxFeePerGas, maxPriorityFeePerGas: this.feeCache.maxPriorityFeePerGas };
  }

  private waitForAny(hashes: Hex[], ms: number): Promise<TransactionReceipt | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (r: TransactionReceipt | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        for (const h of hashes) {
          const list = this.waiting.get(h)?.filter((w) => w !== waiter);
          if (list?.length) this.waiting.set(h, list);
          else this.waiting.delete(h);
        }
        resolve(r);
      };
      const waiter: Waiter = { resolve: finish };
      const timer = setTimeout(() => finish(undefined), Math.max(ms, 0));
      for (const h of hashes) this.waiting.set(h, [...(this.waiting.get(h) ?? []), waiter]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer || this.waiting.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.opts.pollMs);
  }

  private async poll(): Promise<void> {
    const hashes = [...this.waiting.keys()];
    const receipts = await Promise.all(hashes.map((hash) => this.client.getTransactionReceipt({ hash }).catch(() => undefined)));
    receipts.forEach((r, i) => {
      if (!r) return;
      for (const w of this.waiting.get(hashes[i]!) ?? []) w.resolve(r);
    });
    this.timer = undefined;
    this.schedule();
  }
}

import { BaseError, keccak256, RpcRequestError, type Address, type Chain, type Hex, type LocalAccount, type PublicClient, type TransactionReceipt } from "viem";
import type { Logger } from "../platform/log.js";

// Sends transactions from one key under concurrency without nonce collisions or stalls:
// - nonces come from a counter shared through the database (`opts.nonces`, SharedNonceCounter) so any
//   number of processes can send with one key, or, without it, from one in-process counter (then two
//   processes must not share the key); a nonce whose transaction the node refused is handed back and
//   reused first by this process, so the sequence has no gap;
// - a transaction not mined in time whose nonce sits above the chain's pending count is held back by a
//   gap (a nonce allocated by a process that died before sending it): the gap is filled with 0-value
//   transfers to self, so the key never stalls;
// - one watcher polls the receipts of every outstanding transaction in a single JSON-RPC batch, and each
//   new broadcast is looked up once at once (a chain that mines on arrival, like anvil, has it already);
// - a transaction not mined within `resendAfterMs` is re-sent with the same nonce and fees raised
//   by a quarter (a node may park it behind a stale fee), until `timeoutMs`.

export interface SendRequest {
  to: Address;
  data: Hex;
  gas: bigint;
  /**
   * Runs with each signed transaction's hash and nonce before it is broadcast, so a caller can store them
   * first: a process killed between the node accepting a transfer and the caller storing its hash would
   * otherwise leave a sent transfer nobody knows of. If it throws, that transaction is not broadcast.
   */
  beforeBroadcast?: (hash: Hex, nonce: number) => Promise<void>;
}

/** `beforeBroadcast` failed: nothing was broadcast. */
class NotBroadcast extends Error {}

/** A nonce counter shared by every process sending with one key (SharedNonceCounter). */
export interface NonceCounter {
  /** A nonce no other sender is handed, at least `pending` (the chain's pending transaction count). */
  allocate(pending: number): Promise<number>;
  /** Never hands out a nonce below `pending` again. */
  raise(pending: number): Promise<void>;
}

export interface SenderOptions {
  /** Shared nonce counter; unset: an in-process counter (one process per key). */
  nonces?: NonceCounter;
  resendAfterMs: number;
  timeoutMs: number;
  pollMs: number;
  log: Logger;
}

/** `<chain id>:<genesis block hash>`: names one chain, so a fresh dev chain with the same id is another chain. */
export async function chainIdentity(client: PublicClient, chainId: number): Promise<string> {
  const genesis = await client.getBlock({ blockNumber: 0n });
  return `${chainId}:${genesis.hash}`;
}

/** Sent, but not mined in time: the outcome is unknown (the transaction may still be mined). */
export class SendTimeoutError extends Error {
  constructor(readonly hashes: Hex[]) {
    super(`transaction not mined in time (${hashes.join(", ")})`);
  }
}

/** Never accepted by the node: nothing was broadcast, nothing can be mined. */
export class BroadcastError extends Error {}

type Waiter = { resolve(r: TransactionReceipt): void };

/** True when the node answered with a JSON-RPC error (as opposed to no answer at all). */
function nodeRefused(err: unknown): boolean {
  return err instanceof BaseError && err.walk((e) => e instanceof RpcRequestError) !== null;
}

/** Delays of the quick receipt look-ups after a broadcast (each only if shorter than the poll interval). */
const QUICK_LOOKS_MS = [2, 4, 8];

export class TransactionSender {
  private nextNonce: number | undefined;
  private readonly returned: number[] = [];
  private nonceQueue: Promise<unknown> = Promise.resolve();
  private broadcasts: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Map<Hex, Waiter[]>();
  private timer: NodeJS.Timeout | undefined;
  private feeCache: { at: number; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | undefined;
  private pendingCache: { at: number; count: Promise<number> } | undefined;

  constructor(
    private readonly client: PublicClient,
    private readonly account: LocalAccount,
    private readonly chain: Chain,
    private readonly opts: SenderOptions,
  ) {}

  get address(): Address {
    return this.account.address;
  }

  /** Sends and waits for the receipt. `onSubmitted` runs for every hash broadcast (the first and each re-send). */
  async send(req: SendRequest, onSubmitted?: (hash: Hex) => Promise<void> | void): Promise<TransactionReceipt> {
    let fees: Awaited<ReturnType<TransactionSender["fees"]>>;
    try {
      fees = await this.fees();
    } catch (err) {
      throw new BroadcastError(`could not read gas fees: ${(err as Error).message}`);
    }
    const nonce = await this.inOrder(() => this.firstBroadcastNonce(req, fees, onSubmitted));
    return this.follow(req, nonce.nonce, fees, [nonce.hash], onSubmitted);
  }

  /**
   * Runs this process's first broadcasts one after another, so its nonces reach the node in the order they were
   * allocated: a node parks a nonce that arrives before its predecessor (anvil until the re-send, resendAfterMs
   * later), which stalled concurrent sends once allocation and broadcast got fast enough to overtake each other.
   */
  private inOrder<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.broadcasts.then(fn);
    this.broadcasts = run.catch(() => undefined);
    return run;
  }

  /** Broadcasts with a fresh nonce; a nonce the node did not accept goes back to the pool. */
  private async firstBroadcastNonce(req: SendRequest, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }, onSubmitted?: (hash: Hex) => Promise<void> | void) {
    for (let attempt = 1; ; attempt++) {
      const nonce = await this.allocateNonce();
      let hash: Hex;
      try {
        hash = await this.broadcast(req, nonce, fees, []);
      } catch (err) {
        const text = String((err as Error).message).toLowerCase();
        // Another transaction holds the nonce (mined, or pending: e.g. a gap fill raced this send).
        if ((text.includes("nonce too low") || text.includes("replacement transaction underpriced")) && attempt < 4) {
          await this.skipAhead(); // someone else used it: never hand it out again
          continue;
        }
        if (nodeRefused(err) || err instanceof NotBroadcast) {
          // The node answered and refused: nothing was broadcast. Reuse the nonce first.
          this.returned.push(nonce);
          this.returned.sort((a, b) => a - b);
          this.scheduleGapFill(nonce);
          throw new BroadcastError(`transaction was not accepted: ${(err as Error).message}`);
        }
        // No answer: it may or may not have reached the node. Never reuse the nonce; fill it if unused.
        this.scheduleGapFill(nonce);
        throw new SendTimeoutError([]);
      }
      await onSubmitted?.(hash);
      return { nonce, hash };
    }
  }

  private async follow(
    req: SendRequest,
    nonce: number,
    initialFees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
    hashes: Hex[],
    onSubmitted?: (hash: Hex) => Promise<void> | void,
  ): Promise<TransactionReceipt> {
    let fees = initialFees;
    const deadline = Date.now() + this.opts.timeoutMs;
    let fresh: Hex | undefined = hashes[hashes.length - 1]; // broadcast and not looked up yet
    for (let first = true; ; first = false) {
      if (!first) {
        const hash = await this.broadcast(req, nonce, fees, hashes).catch(() => hashes[hashes.length - 1]!);
        if (!hashes.includes(hash)) {
          hashes.push(hash);
          fresh = hash;
          await onSubmitted?.(hash);
        }
      }
      const receipt = await this.waitForAny(hashes, Math.min(this.opts.resendAfterMs, deadline - Date.now()), fresh);
      fresh = undefined;
      if (receipt) return receipt;
      if (Date.now() >= deadline) throw new SendTimeoutError(hashes);
      await this.fillGapsBelow(nonce);
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
    if (req.beforeBroadcast) {
      try {
        await req.beforeBroadcast(keccak256(signed), nonce);
      } catch (err) {
        throw new NotBroadcast(`not broadcast: ${(err as Error).message}`, { cause: err });
      }
    }
    try {
      return await this.client.sendRawTransaction({ serializedTransaction: signed });
    } catch (err) {
      const text = String((err as Error).message).toLowerCase();
      // An earlier broadcast of this nonce was mined or is pending: keep waiting for it.
      if (earlier.length && (text.includes("nonce too low") || text.includes("already known") || text.includes("underpriced"))) {
        return earlier[earlier.length - 1]!;
      }
      throw err;
    }
  }

  /** The chain's pending transaction count of this key, read at most once a second (concurrent callers share a read). */
  private pendingCount(fresh = false): Promise<number> {
    const now = Date.now();
    if (fresh || !this.pendingCache || now - this.pendingCache.at > 1_000) {
      const count = this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
      this.pendingCache = { at: now, count };
      count.catch(() => (this.pendingCache = undefined));
    }
    return this.pendingCache.count;
  }

  /**
   * Nonces below `nonce` that the chain has not seen hold `nonce` back. After `resendAfterMs` any live
   * sender has broadcast what it allocated, so such a nonce was allocated by a process that died (or
   * handed back here): fill it with a 0-value transfer to self. A sender that still broadcasts it loses
   * the race and retries with a fresh nonce.
   */
  private async fillGapsBelow(nonce: number): Promise<void> {
    let pending: number;
    try {
      pending = await this.pendingCount(true);
    } catch {
      return;
    }
    if (pending >= nonce) return;
    const fees = await this.fees().catch(() => undefined);
    if (!fees) return;
    for (let n = pending; n < nonce && n < pending + 64; n++) {
      const i = this.returned.indexOf(n);
      if (i >= 0) this.returned.splice(i, 1);
      try {
        await this.broadcast({ to: this.account.address, data: "0x", gas: 21_000n }, n, fees, []);
        this.opts.log.warn({ nonce: n }, "filled a nonce gap (allocated, never sent) with a 0-value transfer to self");
      } catch {
        // Taken meanwhile by its own transaction, or refused: the next round looks again.
      }
    }
  }

  private allocateNonce(): Promise<number> {
    const shared = this.opts.nonces;
    if (shared) {
      if (this.returned.length) return Promise.resolve(this.returned.shift()!);
      return this.pendingCount()
        .then((pending) => shared.allocate(pending))
        .catch((err) => {
          throw new BroadcastError(`could not allocate a nonce: ${(err as Error).message}`);
        });
    }
    const next = this.nonceQueue.then(async () => {
      if (this.returned.length) return this.returned.shift()!;
      if (this.nextNonce === undefined) {
        this.nextNonce = await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
      }
      return this.nextNonce++;
    });
    this.nonceQueue = next.catch(() => undefined);
    return next.catch((err) => {
      throw new BroadcastError(`could not read the account nonce: ${(err as Error).message}`);
    });
  }

  /**
   * A nonce that nobody used would hold back every later transaction of this key: after a delay, if the
   * chain has not used it and no new send took it, a 0-value transfer to self fills it.
   */
  private scheduleGapFill(nonce: number, delayMs = this.opts.resendAfterMs): void {
    setTimeout(() => {
      void (async () => {
        const pending = await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
        if (pending > nonce) return; // used by its own transaction or a later send
        const i = this.returned.indexOf(nonce);
        if (i >= 0) this.returned.splice(i, 1);
        const fees = await this.fees();
        await this.broadcast({ to: this.account.address, data: "0x", gas: 21_000n }, nonce, fees, []);
        this.opts.log.warn({ nonce }, "filled an unused nonce with a 0-value transfer to self");
      })().catch((err) => {
        if (!String((err as Error).message).toLowerCase().includes("nonce too low")) this.scheduleGapFill(nonce, Math.min(delayMs * 2, 60_000));
      });
    }, delayMs).unref();
  }

  /** Moves the counter forward to the chain's pending count (never backward: allocated nonces stay unique). */
  private async skipAhead(): Promise<void> {
    if (this.opts.nonces) {
      const pending = await this.pendingCount(true).catch(() => undefined);
      if (pending === undefined) return;
      this.returned.splice(0, this.returned.length, ...this.returned.filter((n) => n >= pending));
      await this.opts.nonces.raise(pending).catch(() => undefined);
      return;
    }
    await (this.nonceQueue = this.nonceQueue
      .then(async () => {
        const pending = await this.client.getTransactionCount({ address: this.account.address, blockTag: "pending" });
        this.returned.splice(0, this.returned.length, ...this.returned.filter((n) => n >= pending));
        if (this.nextNonce === undefined || pending > this.nextNonce) this.nextNonce = pending;
      })
      .catch(() => undefined));
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

  /** The first receipt of any of `hashes` within `ms`; `lookNow` is asked for at once, not at the next poll. */
  private waitForAny(hashes: Hex[], ms: number, lookNow?: Hex): Promise<TransactionReceipt | undefined> {
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
      if (lookNow) {
        // A node may answer the broadcast a moment before it has mined it (anvil does): a few quick looks
        // catch the receipt within milliseconds instead of at the next poll.
        const look = (i: number): void => {
          if (done) return;
          this.client.getTransactionReceipt({ hash: lookNow }).then(
            (r) => r && finish(r),
            () => {
              // Not mined yet (or no answer): look again soon; the regular poll keeps looking too.
              const delay = QUICK_LOOKS_MS[i];
              if (!done && delay !== undefined && delay < this.opts.pollMs) setTimeout(() => look(i + 1), delay);
            },
          );
        };
        look(0);
      }
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

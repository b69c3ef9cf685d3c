import { createTransport, RpcRequestError, type EIP1193RequestFn, type Transport } from "viem";
import { getHttpRpcClient } from "viem/utils";

// viem's HTTP JSON-RPC transport, batched like a group commit instead of on a timer: every request asked
// for in the same turn of the event loop goes out as one JSON-RPC batch at the end of that turn
// (setImmediate). viem's own batching waits out a timer (setTimeout, at least ~1 ms and 2 ms as configured
// before) before each hop, which a paid call pays four times over (verify, nonce, broadcast, receipt) even
// when nothing else is in flight; under load the requests of one turn still share a request.

interface Pending {
  body: { method: string; params?: unknown; id: number };
  resolve(result: unknown): void;
  reject(err: unknown): void;
}

export interface BatchedHttpOptions {
  timeout: number;
  retryCount: number;
  /** Most requests in one JSON-RPC batch (viem's default is 1,000). */
  batchSize?: number;
}

let nextId = 1;

export function batchedHttp(url: string, opts: BatchedHttpOptions): Transport {
  return () => {
    const rpc = getHttpRpcClient(url, { timeout: opts.timeout });
    const batchSize = opts.batchSize ?? 1_000;
    let queue: Pending[] = [];
    let scheduled: NodeJS.Immediate | undefined;
    const send = (batch: Pending[]) => {
      rpc.request({ body: batch.map((p) => p.body) }).then(
        (answers: unknown) => {
          // Answers may come in any order: each goes to its request by id. A node that refuses a whole batch (a
          // rate limit...) answers one error without an id (viem repeats it per request): it refuses every request.
          type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } } | undefined;
          const list = (Array.isArray(answers) ? answers : [answers]) as Answer[];
          const byId = new Map(list.filter((a) => a?.id != null).map((a) => [Number(a!.id), a!]));
          const whole = list.find((a) => a?.id == null && a?.error)?.error;
          for (const p of batch) {
            const a = byId.get(p.body.id);
            const error = a ? a.error : (whole ?? { code: -32603, message: "the node's batch answer has no answer for this request" });
            if (error) p.reject(new RpcRequestError({ body: p.body, error, url }));
            else p.resolve(a!.result);
          }
        },
        (err) => batch.forEach((p) => p.reject(err)),
      );
    };
    const flush = () => {
      scheduled = undefined;
      const all = queue;
      queue = [];
      for (let i = 0; i < all.length; i += batchSize) send(all.slice(i, i + batchSize));
    };
    return createTransport(
      {
        key: "http",
        name: "HTTP JSON-RPC (batched per event-loop turn)",
        type: "http",
        retryCount: opts.retryCount,
        timeout: opts.timeout,
        request: (({ method, params }: { method: string; params?: unknown }) =>
          new Promise((resolve, reject) => {
            queue.push({ body: { method, params, id: nextId++ }, resolve, reject });
            scheduled ??= setImmediate(flush);
          })) as EIP1193RequestFn,
      },
      { url },
    );
  };
}

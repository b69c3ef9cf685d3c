import { decodeErrorResult, decodeEventLog, toEventSelector, type AbiEvent, type Address, type Hex } from "viem";
import { DEV_USDC, SETTLEMENT_BATCHER } from "./artifacts.js";

// Reads one payment's settlement out of a transaction's logs, whether the transaction settled it alone
// (transferWithAuthorization sent to the token) or as item `index` of a SettlementBatcher batch. The
// token's AuthorizationUsed(authorizer, nonce) event is what proves THIS authorization ran; the
// batcher's SettlementItem event gives its index. Used by the facilitator, reconcile and `svc verify`.

type Log = { address: string; data: Hex; topics: readonly Hex[]; logIndex?: number | null };

export interface SettlementInTx {
  /** The token emitted AuthorizationUsed(payer, nonce) in this transaction. */
  used: boolean;
  /** The token moved `value` from payer to `to` (checked when given). */
  transferred: boolean;
  /** Index of the authorization in a batch; null when no batcher event names it (settled alone). */
  batchIndex: number | null;
  /** The batcher reported the item failed, with the token's revert reason. */
  failure?: string;
}

/** Events we read, by topic0 (decoding against one event is far cheaper than against whole ABIs). */
const EVENTS = new Map<string, AbiEvent>(
  [...DEV_USDC.abi, ...SETTLEMENT_BATCHER.abi]
    .filter((item): item is AbiEvent => item.type === "event" && ["AuthorizationUsed", "Transfer", "SettlementItem"].includes(item.name))
    .map((e) => [toEventSelector(e), e]),
);

type Decoded = { eventName: string; args: Record<string, unknown> } | undefined;
/** A batch's items all read the same receipt: decode each log once. */
const cache = new WeakMap<readonly Log[], Decoded[]>();

function decodeAll(logs: readonly Log[]): Decoded[] {
  let out = cache.get(logs);
  if (!out) {
    out = logs.map((log) => {
      const event = log.topics[0] && EVENTS.get(log.topics[0]);
      if (!event) return undefined;
      try {
        return decodeEventLog({ abi: [event], data: log.data, topics: log.topics as [Hex, ...Hex[]] }) as never;
      } catch {
        return undefined;
      }
    });
    cache.set(logs, out);
  }
  return out;
}

/** The token's revert message in a batcher item's `reason` bytes (Error(string)), or its hex. */
export function revertText(reason: Hex): string {
  if (reason === "0x") return "reverted without a reason";
  try {
    const e = decodeErrorResult({ abi: [{ type: "error", name: "Error", inputs: [{ name: "message", type: "string" }] }], data: reason });
    return String(e.args[0]);
  } catch {
    return `reverted with ${reason.slice(0, 74)}`;
  }
}

export function findSettlement(
  logs: readonly Log[],
  token: Address,
  payer: Address,
  nonce: Hex,
  transfer?: { to: Address; value: bigint },
  batcher?: Address,
): SettlementInTx {
  const out: SettlementInTx = { used: false, transferred: false, batchIndex: null };
  const p = payer.toLowerCase();
  const n = nonce.toLowerCase();
  const decoded = decodeAll(logs);
  for (const [i, log] of logs.entries()) {
    const ev = decoded[i];
    if (!ev) continue;
    const from = log.address.toLowerCase();
    if (from === token.toLowerCase()) {
      if (ev.eventName === "AuthorizationUsed" && String(ev.args.authorizer).toLowerCase() === p && String(ev.args.nonce).toLowerCase() === n) out.used = true;
      if (ev.eventName === "Transfer" && transfer && String(ev.args.from).toLowerCase() === p && String(ev.args.to).toLowerCase() === transfer.to.toLowerCase() && ev.args.value === transfer.value) {
        out.transferred = true;
      }
    } else if (ev.eventName === "SettlementItem" && (!batcher || from === batcher.toLowerCase())) {
      if (String(ev.args.authorizer).toLowerCase() !== p || String(ev.args.nonce).toLowerCase() !== n) continue;
      out.batchIndex = Number(ev.args.index);
      if (!ev.args.success) out.failure = revertText(ev.args.reason as Hex);
    }
  }
  if (!transfer) out.transferred = out.used;
  return out;
}

/** The settlement reference of a proof record: the tx hash, with `:index` when the payment was one item of a batch. */
export function settlementRef(txHash: string, batchIndex: number | null | undefined): string {
  return batchIndex === null || batchIndex === undefined ? txHash.toLowerCase() : `${txHash.toLowerCase()}:${batchIndex}`;
}

/** Splits a settlement reference into its transaction hash and batch index. */
export function parseSettlementRef(ref: string): { txHash: Hex; batchIndex: number | null } {
  const m = /^(0x[0-9a-fA-F]{64})(?::(\d{1,6}))?$/.exec(ref);
  if (!m) return { txHash: ref as Hex, batchIndex: null };
  return { txHash: m[1]!.toLowerCase() as Hex, batchIndex: m[2] === undefined ? null : Number(m[2]) };
}

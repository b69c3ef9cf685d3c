import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient, type TransactionReceipt } from "viem";
import type { ChainRuntime } from "./chain-runtime.js";

// What became of the broadcasts of one send (TransactionSender re-sends with the same nonce and higher
// fees, so at most one of them can be mined). Used before sending a refund or payout again after a crash.

export type SentOutcome = { kind: "mined"; receipt: TransactionReceipt } | { kind: "pending" } | { kind: "dead" };

/** The nonce of a broadcast transaction, when the node still knows it. */
export async function nonceOf(client: PublicClient, hash: Hex): Promise<number | undefined> {
  try {
    return (await client.getTransaction({ hash })).nonce;
  } catch (err) {
    if (err instanceof TransactionNotFoundError) return undefined;
    throw err;
  }
}

/**
 * Mined (a success receipt), pending (may still be mined: its nonce is unused, or unknown), or dead
 * (reverted, or its nonce was used by another transaction: nothing moved, it can be sent again). The
 * nonce count is read before the receipts, so a hash mined in between is seen as mined, never as dead.
 * RPC failures throw (an unknown outcome is never taken for dead).
 */
export async function sentOutcome(client: PublicClient, from: Address, hashes: Hex[], knownNonce?: number): Promise<SentOutcome> {
  let nonce = knownNonce;
  for (const hash of hashes) if (nonce === undefined) nonce = await nonceOf(client, hash);
  const used = nonce !== undefined && (await client.getTransactionCount({ address: from, blockTag: "latest" })) > nonce;
  const receipts = await Promise.all(
    hashes.map((hash) =>
      client.getTransactionReceipt({ hash }).catch((err) => {
        if (err instanceof TransactionReceiptNotFoundError) return undefined;
        throw err;
      }),
    ),
  );
  const mined = receipts.find((r) => r?.status === "success");
  if (mined) return { kind: "mined", receipt: mined };
  if (used || (hashes.length > 0 && receipts.every((r) => r?.status === "reverted"))) return { kind: "dead" };
  return { kind: "pending" };
}

/** The stored broadcasts of one send: its nonce (when known) and every hash signed for it. */
export interface SentRecord {
  nonce?: number;
  hashes: Hex[];
}

/** Reads a stored SentRecord; a bare JSON array of hashes (rows written before nonces were stored) has no nonce. */
export function parseSent(json: string | null | undefined): SentRecord {
  if (!json) return { hashes: [] };
  const v = JSON.parse(json) as SentRecord | Hex[];
  return Array.isArray(v) ? { hashes: v } : v;
}

/**
 * Adds a signed hash to a stored record, with its nonce. The latest nonce wins: a send changes nonce only when
 * the node refused the earlier one outright (nonce too low), so that earlier hash can never be mined; keeping
 * the first nonce would let a later used-by-another check call a still-minable re-send dead.
 */
export function withSent(record: SentRecord, hash: Hex, nonce: number): SentRecord {
  return { nonce, hashes: record.hashes.includes(hash) ? record.hashes : [...record.hashes, hash] };
}

/** Whether the node knows any of the hashes (pending or mined). */
export async function knownToNode(client: PublicClient, hashes: Hex[]): Promise<boolean> {
  for (const hash of hashes) if ((await nonceOf(client, hash)) !== undefined) return true;
  return false;
}

/**
 * Takes `nonce` of the treasury key with a 0-value transfer to itself: a stored send the node does not know
 * (dropped, or signed and stored but never broadcast) can then never be mined, so it may be sent again.
 */
export async function takeTreasuryNonce(chain: ChainRuntime, from: Address, nonce: number): Promise<void> {
  const account = chain.treasuryAccount;
  if (!account || account.address.toLowerCase() !== from.toLowerCase()) return;
  const fees = await chain.publicClient.estimateFeesPerGas();
  const signed = await account.signTransaction({ chainId: chain.chain.id, type: "eip1559", nonce, to: account.address, data: "0x", gas: 21_000n, maxFeePerGas: fees.maxFeePerGas * 2n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas });
  await chain.publicClient.sendRawTransaction({ serializedTransaction: signed });
}

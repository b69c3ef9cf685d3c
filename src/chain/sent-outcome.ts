import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient, type TransactionReceipt } from "viem";

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

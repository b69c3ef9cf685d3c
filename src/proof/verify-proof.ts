import { createHash } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { decodeEventLog, getAddress, type Hex, type PublicClient } from "viem";
import { DEV_USDC } from "../chain/artifacts.js";
import { findSettlement, parseSettlementRef } from "../chain/settlement-logs.js";
import { canonicalJson } from "../platform/canonical-json.js";
import { verifyProofSignature } from "./proof-signer.js";

// `svc verify`: checks a proof record the way a third party would, trusting only the published public
// key and the chain: the record's hash, its Ed25519 signature, its Merkle inclusion in an anchored
// root, the anchor transaction, and for a settlement (kind 30120) the transfer it claims.

export type Outcome = "pass" | "fail" | "pending";
export interface Check {
  name: string;
  outcome: Outcome;
  detail: string;
}

type Json = Record<string, any>;

/** The canonical record a proof's signature and hash cover (a proof as served by the REST routes). */
export function canonicalRecordOf(p: Json): string {
  return canonicalJson({ kind: p.kind, settlement_ref: p.settlement_ref || null, task_class: p.task_class, ts: p.ts, body: p.body });
}

export async function verifyProof(proof: Json, publicKey: string, anchorAddress: string | undefined, client: PublicClient): Promise<Check[]> {
  const checks: Check[] = [];
  const add = (name: string, outcome: Outcome, detail: string) => checks.push({ name, outcome, detail });
  const canonical = canonicalRecordOf(proof);
  const hash = createHash("sha256").update(canonical, "utf8").digest("hex");
  add("hash", hash === proof.record_sha256 ? "pass" : "fail", hash === proof.record_sha256 ? `record_sha256 ${hash}` : `the record hashes to ${hash}, not the stated ${proof.record_sha256}: its content was altered`);
  const signed = Boolean(proof.ed25519_signature) && verifyProofSignature(publicKey, canonical, proof.ed25519_signature);
  add("signature", signed ? "pass" : "fail", signed ? "Ed25519 signature valid for the published key" : "the Ed25519 signature does not verify with the published key for this content");

  const inc = proof.inclusion as Json | undefined;
  if (!inc?.root) {
    add("inclusion", "pending", "the record is not anchored yet (it joins the next Merkle batch)");
    add("anchor", "pending", "no anchor yet");
  } else {
    let included = false;
    try {
      included = SimpleMerkleTree.verify(inc.root, `0x${hash}`, inc.path ?? []);
    } catch {
      included = false;
    }
    add("inclusion", included ? "pass" : "fail", included ? `leaf ${inc.leaf_index} is in root ${inc.root}` : `the inclusion path does not lead from this record to root ${inc.root}`);
    const tx = await client.getTransaction({ hash: inc.anchor_tx_hash as Hex }).catch(() => undefined);
    const receipt = tx ? await client.getTransactionReceipt({ hash: inc.anchor_tx_hash as Hex }).catch(() => undefined) : undefined;
    const problem = !tx
      ? `anchor transaction ${inc.anchor_tx_hash} is not on the chain`
      : receipt?.status !== "success"
        ? `anchor transaction ${inc.anchor_tx_hash} did not succeed`
        : tx.input.toLowerCase() !== String(inc.root).toLowerCase()
          ? `anchor transaction ${inc.anchor_tx_hash} carries ${tx.input}, not the root ${inc.root}`
          : anchorAddress && getAddress(tx.from) !== getAddress(anchorAddress)
            ? `anchor transaction was sent by ${tx.from}, not the published anchor address ${anchorAddress}`
            : undefined;
    add("anchor", problem ? "fail" : "pass", problem ?? `root anchored by ${inc.anchor_tx_hash} in block ${receipt!.blockNumber}`);
  }

  if (proof.kind === 30120) {
    const { txHash, batchIndex } = parseSettlementRef(String(proof.settlement_ref));
    const receipt = await client.getTransactionReceipt({ hash: txHash }).catch(() => undefined);
    // One payment of a batched settlement: THIS authorization (payer, nonce) must have run at its index.
    const item =
      batchIndex === null || !receipt
        ? undefined
        : findSettlement(receipt.logs, String(proof.body.asset) as Hex, String(proof.body.payer) as Hex, String(proof.body.authorization_nonce ?? "0x") as Hex);
    const itemOk = batchIndex === null || (item !== undefined && item.used && item.batchIndex === batchIndex && item.failure === undefined);
    const transfer = itemOk && receipt?.logs.some((log) => {
      try {
        const ev = decodeEventLog({ abi: DEV_USDC.abi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
        const a = ev.args as { from?: string; value?: bigint };
        return ev.eventName === "Transfer" && log.address.toLowerCase() === String(proof.body.asset).toLowerCase() && a.from?.toLowerCase() === String(proof.body.payer).toLowerCase() && a.value === BigInt(proof.body.amount);
      } catch {
        return false;
      }
    });
    const what = batchIndex === null ? String(proof.settlement_ref) : `${txHash} (item ${batchIndex} of a batch)`;
    add("settlement", receipt?.status === "success" && transfer ? "pass" : "fail", receipt?.status === "success" && transfer ? `${what} moved ${proof.body.amount} from ${proof.body.payer}` : `${what} is not a successful transfer of ${proof.body.amount} from ${proof.body.payer}`);
  }
  return checks;
}

import { createHash } from "node:crypto";
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { canonicalJson } from "../platform/canonical-json.js";

// Merkle commitment of an audit's results: one leaf per item (each category's result, each finding),
// the leaf being the SHA-256 of the item's RFC 8785 canonical JSON. The root goes into the signed report
// on the proof rail; each item carries its leaf and inclusion proof, so one finding can later be shown
// alone and checked against the anchored root (SimpleMerkleTree.verify(root, leaf, proof)).

export const FINDINGS_MERKLE_TREE =
  "OpenZeppelin SimpleMerkleTree (leaves sorted, pairs hashed sorted with keccak256): one leaf per category result = SHA-256 of the RFC 8785 canonical JSON of {category, name, status, finding_ids}, and one leaf per finding = SHA-256 of the canonical JSON of the finding without its leaf and proof";

export const leafOf = (item: unknown) => `0x${createHash("sha256").update(canonicalJson(item), "utf8").digest("hex")}`;

/** The root over `items`, and each item's leaf and inclusion proof, in the items' order. */
export function commitItems(items: unknown[]): { root: string; proofs: { leaf: string; proof: string[] }[] } {
  const leaves = items.map(leafOf);
  const tree = SimpleMerkleTree.of(leaves);
  return { root: tree.root, proofs: leaves.map((leaf) => ({ leaf, proof: tree.getProof(leaf) })) };
}

import { z } from "zod";
import { canonicalJson } from "../platform/canonical-json.js";
import type { ProofKey } from "../proof/proof-recorder.js";

// A deliverable signed with the proof rail's Ed25519 key, so a third party can check it offline with the
// key published at GET /v1/proofs/keys: verify `signature.value` over the RFC 8785 canonical JSON of the
// deliverable without its `signature` field.

export const SignatureSchema = z.object({
  alg: z.literal("Ed25519"),
  value: z.string(),
  public_key: z.string(),
  keys_url: z.string(),
  covers: z.string(),
});

export function signEvidence<T extends Record<string, unknown>>(evidence: T, key: ProofKey): T & { signature: z.infer<typeof SignatureSchema> } {
  return {
    ...evidence,
    signature: {
      alg: "Ed25519",
      value: key.signer.sign(canonicalJson(evidence)),
      public_key: key.signer.publicKeyBase64(),
      keys_url: "/v1/proofs/keys",
      covers: "RFC 8785 canonical JSON of this deliverable without its `signature` field",
    },
  };
}

import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "../platform/canonical-json.js";
import { newId } from "../platform/ids.js";
import { signatureDisclosure } from "../proof/proof-recorder.js";
import { SealEntity } from "./seal.entity.js";
import type { SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// attestation.single-use-seal: seals that content (by its SHA-256) was produced by an agent at a time.
// The seal is stored, signed, and can be verified once as unused before it reports its use.

const Input = z
  .object({
    producer: z.string().trim().min(1).max(128),
    content: z.string().max(1_000_000).optional(),
    content_sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters").optional(),
    produced_at: z.iso.datetime({ offset: true }).optional(),
  })
  .loose()
  .refine((i) => (i.content === undefined) !== (i.content_sha256 === undefined), { message: "give exactly one of content or content_sha256" });
type Input = z.infer<typeof Input>;

const Output = z.object({
  seal_id: z.string(),
  content_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  producer: z.string(),
  produced_at: Iso,
  sealed_at: Iso,
  payer: z.string(),
  state: z.literal("unused"),
  signature: z.string(),
  signature_alg: z.string(),
  signature_disclosure: z.string(),
});


export function attestationSingleUseSeal(): SkuHandler<Input> {
  return {
    skuId: "attestation.single-use-seal",
    poweredBy: "svc-attest/seal",
    input: Input,
    output: Output,
    async run(input, ctx) {
      const contentSha256 = input.content_sha256 ?? createHash("sha256").update(input.content!, "utf8").digest("hex");
      const producedAt = input.produced_at ? new Date(input.produced_at) : ctx.now;
      const sealId = newId("seal");
      const claim = { seal_id: sealId, content_sha256: contentSha256, producer: input.producer, produced_at: producedAt.toISOString(), sealed_at: ctx.now.toISOString(), payer: ctx.payer };
      const signature = createHmac("sha256", ctx.proofKey.hmacKey).update(canonicalJson(claim)).digest("hex");
      await ctx.manager.insert(SealEntity, {
        sealId,
        contentSha256,
        producer: input.producer,
        producedAt,
        payer: ctx.payer,
        signature,
        sealedAt: ctx.now,
        usedAt: null,
      });
      return { ...claim, state: "unused", signature, signature_alg: "HMAC-SHA256 over RFC 8785 canonical JSON of the claim", signature_disclosure: signatureDisclosure(ctx.proofKey) };
    },
  };
}

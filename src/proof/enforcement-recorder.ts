import { createHash } from "node:crypto";
import type { DataSource } from "typeorm";
import type { Address, Hex } from "viem";
import type { Logger } from "../platform/log.js";
import { authorizationDigest, recoverSigner } from "../x402/eip3009.js";
import { PROOF_KIND, recordProof, type ProofKey } from "./proof-recorder.js";

// Gate firings on the proof rail (kind 30014, enforcement): a paid call refused by a gate that judged
// its payer. Only a payer whose authorization signature recovers is recorded (nobody can put another
// wallet on the rail), once per gate, payer and SKU per UTC hour (the settlement_ref is that key's
// digest), and at most `maxPerMinute` per server, so refused traffic cannot flood the rail.

export interface GateFiring {
  gate: string;
  reason: string;
  skuId: string;
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: string;
}

export class EnforcementRecorder {
  private windowStart = 0;
  private inWindow = 0;

  constructor(
    private readonly ds: DataSource,
    private readonly key: ProofKey,
    /** EIP-712 domain separator of the USDC contract payments are signed for. */
    private readonly separator: Uint8Array,
    private readonly log: Logger,
    private readonly maxPerMinute = 60,
  ) {}

  /** Records the firing if its payer is proven; never throws (the refusal is answered either way). */
  async record(f: GateFiring, now = new Date()): Promise<void> {
    try {
      const a = f.authorization;
      const auth = { from: a.from as Address, to: a.to as Address, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce as Hex };
      const signer = recoverSigner(authorizationDigest(this.separator, auth), f.signature as Hex);
      if (signer.toLowerCase() !== a.from.toLowerCase()) return;
      if (now.getTime() - this.windowStart >= 60_000) [this.windowStart, this.inWindow] = [now.getTime(), 0];
      if (this.inWindow >= this.maxPerMinute) return;
      this.inWindow++;
      const hour = now.toISOString().slice(0, 13);
      const ref = `0x${createHash("sha256").update(`${f.gate}|${signer.toLowerCase()}|${f.skuId}|${hour}`).digest("hex")}`;
      await recordProof(this.ds.manager, this.key, {
        kind: PROOF_KIND.enforcement,
        settlementRef: ref,
        taskClass: f.skuId.split(".")[0]!,
        ts: now,
        body: { gate: f.gate, reason: f.reason, sku_id: f.skuId, subject: signer, action: "refused", charged: false, window: `${hour}:00Z` },
      });
    } catch (err) {
      this.log.debug({ err, gate: f.gate }, "gate firing not recorded");
    }
  }
}

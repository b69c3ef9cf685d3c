import type { JsonObject } from "@bufbuild/protobuf";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import { errors } from "../platform/rpc/errors.js";
import { PROOF_KIND } from "../proof/proof-recorder.js";
import type { SkuHandler } from "../skus/sku-handler.js";
import { scanContent } from "../trust/content-scan.js";
import { SERVED_JURISDICTIONS } from "../catalog/jurisdictions.js";
import { upstreamKey, type Breakers } from "./circuit-breakers.js";
import { checkJurisdiction, JURISDICTION_HEADER, type Jurisdiction } from "./jurisdiction.js";
import type { RateLimiter } from "./payer-rate-limit.js";

// The policy gates every paid call passes before any charge, in this order: content-trap scan of the
// input, jurisdiction, the circuit breakers of the upstreams the call needs (all before the 402
// challenge), then the payer's rate limit (once the payment names the payer). What was applied is
// reported in `svc_trust.policy_manifest`.

export interface PolicyDecision {
  jurisdiction: Jurisdiction | undefined;
  upstreams: string[];
  inputScanned: boolean;
}

export class PolicyGates {
  constructor(
    private readonly breakers: Breakers | undefined,
    private readonly rateLimiter: RateLimiter | undefined,
  ) {}

  /** Gates that need no payer; throws the refusal (409 / 400), never charging. */
  async beforeChallenge(sku: SkuDefinition, handler: SkuHandler<any>, rawInput: JsonObject, input: unknown, jurisdictionHeader: string | undefined): Promise<PolicyDecision> {
    const inputScanned = handler.inputScan !== "off";
    if (inputScanned) {
      const rules = scanContent(rawInput);
      if (rules.length) {
        throw errors.gateRefused("content_trap", `the call's input matches content-trap rule${rules.length > 1 ? "s" : ""} ${rules.join(", ")} (prompt-injection or hidden-instruction patterns); nothing was charged`, rules.join(","));
      }
    }
    const jurisdiction = checkJurisdiction(jurisdictionHeader, rawInput.jurisdiction);
    // (No await and no Promise.all when the SKU names no upstream: the 402 challenge path is hot.)
    const named = handler.upstreams ? await handler.upstreams(input) : undefined;
    const upstreams = named?.length ? [...new Set(named.map(upstreamKey))] : [];
    const states = this.breakers && upstreams.length ? await Promise.all(upstreams.map((u) => this.breakers!.state(u))) : [];
    for (const [i, u] of upstreams.entries()) {
      if (this.breakers && states[i] === "open") {
        const seconds = Math.ceil((await this.breakers.retryAfterMs(u)) / 1000);
        throw errors.gateRefused("circuit_open", `${sku.skuId} needs ${u}, which failed repeatedly: its circuit breaker is open for ${seconds} s more; nothing was charged`, u);
      }
    }
    return { jurisdiction, upstreams, inputScanned };
  }

  /** The per-payer rate limit: 429 `rate_limited` with Retry-After, before any charge. */
  async forPayer(payer: string): Promise<void> {
    const waitMs = (await this.rateLimiter?.take(payer)) ?? 0;
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      const { perMinute, burst } = this.rateLimiter!.options;
      throw errors.resourceExhausted("rate_limited", `payer ${payer} is over the rate limit of ${perMinute} paid calls a minute (bursts of ${burst}); retry in ${seconds} s; nothing was charged`, {
        headers: { "retry-after": String(seconds) },
      });
    }
  }

  /** `svc_trust.policy_manifest`: every gate, its mode, and what it decided for this call. */
  manifest(sku: SkuDefinition, d: PolicyDecision | undefined): JsonObject {
    const breaker = this.breakers?.options;
    const limit = this.rateLimiter?.options;
    return {
      payment: { mode: "enforce", scheme: "x402 exact (EIP-3009)", settle: "after delivery" },
      content_scan: {
        input: d?.inputScanned === false ? "off" : "enforce",
        deliverable: "flag",
        rules: "content-trap patterns (prompt injection, hidden instructions, hidden text)",
      },
      jurisdiction: { mode: "enforce", declared: d?.jurisdiction ?? null, how: `${JURISDICTION_HEADER} header or jurisdiction field`, served: [...SERVED_JURISDICTIONS], excluded: ["CN"] },
      circuit_breaker: {
        mode: breaker ? "enforce" : "off",
        upstreams: d?.upstreams ?? [],
        ...(breaker ? { failure_threshold: breaker.threshold, cooldown_seconds: breaker.cooldownMs / 1000 } : {}),
      },
      rate_limit: limit && limit.perMinute > 0 ? { mode: "enforce", per_payer_per_minute: limit.perMinute, burst: limit.burst } : { mode: "off" },
      onboarding: { mode: sku.onboardingRequired ? "enforce" : "off" },
      proof: { kind: PROOF_KIND.settledOutcome, path: "/v1/proofs/settlement/{tx_hash}" },
    };
  }
}

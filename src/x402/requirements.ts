import { create } from "@bufbuild/protobuf";
import { getAddress, type Address } from "viem";
import { PaymentRequiredSchema, PaymentRequirementsSchema, type PaymentPayload, type PaymentRequired, type PaymentRequirements } from "../../gen/svc/payment/v1/x402_pb.js";
import type { NetworkInfo } from "../chain/networks.js";
import type { SkuDefinition } from "../catalog/catalog-config.js";
import { describeSku } from "../catalog/catalog.mapper.js";

// The payment requirements of a SKU call, in both x402 generations. `extra` carries the token's EIP-712
// domain, the SKU the requirements belong to, and the fee that applies (disclosure).

export interface ChallengeContext {
  network: NetworkInfo;
  treasury: Address;
  maxTimeoutSeconds: number;
  /** Absolute base URL of the resource. */
  baseUrl: string;
  feeBps: number;
}

export interface SkuRequirements {
  v2: PaymentRequirements;
  v1: PaymentRequirements;
}

export function skuRequirements(sku: SkuDefinition, ctx: ChallengeContext): SkuRequirements {
  const amount = sku.priceAtomic!.toString();
  const url = `${ctx.baseUrl}/v1/services/${sku.skuId}`;
  const common = {
    scheme: "exact",
    asset: getAddress(ctx.network.usdcAddress),
    payTo: getAddress(ctx.treasury),
    maxTimeoutSeconds: ctx.maxTimeoutSeconds,
    extra: { ...ctx.network.usdcDomain, sku_id: sku.skuId, svc_fee_bps: ctx.feeBps },
  };
  return {
    v2: create(PaymentRequirementsSchema, { ...common, network: ctx.network.caip2, amount }),
    v1: create(PaymentRequirementsSchema, {
      ...common,
      network: ctx.network.v1Name,
      maxAmountRequired: amount,
      resource: url,
      description: describeSku(sku),
      mimeType: "application/json",
    }),
  };
}

export interface Challenge {
  v2: PaymentRequired;
  v1: PaymentRequired;
}

export function challenge(sku: SkuDefinition, reqs: SkuRequirements, ctx: ChallengeContext, error: string): Challenge {
  return {
    v2: create(PaymentRequiredSchema, {
      x402Version: 2,
      error,
      resource: { url: `${ctx.baseUrl}/v1/services/${sku.skuId}`, description: describeSku(sku), mimeType: "application/json" },
      accepts: [reqs.v2],
    }),
    v1: create(PaymentRequiredSchema, { x402Version: 1, error, accepts: [reqs.v1] }),
  };
}

const CORE_FIELDS = ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds"] as const;

/**
 * The requirements a payment was made against, or undefined when it matches none of ours. v2 echoes the
 * chosen requirements in `accepted`: its core fields must equal ours and our `extra` must be contained in
 * its `extra` (so a payment built for one SKU or price cannot pay for another). v1 names only scheme and
 * network; its price binding is the signed value, checked in verification.
 */
export function matchRequirements(payload: PaymentPayload, reqs: SkuRequirements): PaymentRequirements | undefined {
  if (payload.x402Version === 1) {
    return payload.scheme === reqs.v1.scheme && payload.network === reqs.v1.network ? reqs.v1 : undefined;
  }
  const accepted = payload.accepted;
  if (!accepted) return undefined;
  for (const f of CORE_FIELDS) if (accepted[f] !== reqs.v2[f]) return undefined;
  const theirs = accepted.extra ?? {};
  for (const [k, v] of Object.entries(reqs.v2.extra ?? {})) {
    if (JSON.stringify((theirs as Record<string, unknown>)[k]) !== JSON.stringify(v)) return undefined;
  }
  return reqs.v2;
}

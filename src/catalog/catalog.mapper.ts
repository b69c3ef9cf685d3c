import { create } from "@bufbuild/protobuf";
import { ExecutionMode, SkuSchema, type Sku } from "../../gen/svc/catalog/v1/catalog_pb.js";
import type { NetworkInfo } from "../chain/networks.js";
import { atomicToUsdText } from "../platform/money.js";
import type { SkuDefinition } from "./catalog-config.js";
import type { SkuSchemas } from "../skus/sku-schemas.js";

/** The purpose text plus the price statement every catalog description carries. */
export function describeSku(def: SkuDefinition): string {
  if (def.retired || def.priceAtomic === undefined) {
    return `${def.purpose}. Retired: no 402 challenge is issued and nothing is charged.`;
  }
  return (
    `${def.purpose}. List price ${atomicToUsdText(def.priceAtomic)} USD per call, paid in USDC with x402; ` +
    `the amount to pay is read from the 402 challenge (payment-required header), never hard-coded.`
  );
}

export function toSkuProto(def: SkuDefinition, network: NetworkInfo, available: boolean, schemas?: SkuSchemas): Sku {
  return create(SkuSchema, {
    skuId: def.skuId,
    family: def.family,
    name: def.name,
    description: describeSku(def),
    priceAmount: def.priceAtomic?.toString(),
    payment: {
      protocol: "x402",
      network: network.caip2,
      asset: "USDC",
      scheme: "exact",
      assetAddress: network.usdcAddress,
    },
    mode: def.mode === "sync" ? ExecutionMode.SYNC : ExecutionMode.ASYNC,
    retired: def.retired,
    onboardingRequired: def.onboardingRequired,
    available: available && !def.retired,
    path: `/v1/services/${def.skuId}`,
    inputSchema: schemas?.input,
    outputSchema: schemas?.output,
  });
}

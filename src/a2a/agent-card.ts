import type { JsonObject } from "@bufbuild/protobuf";
import type { ListServicesResponse } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { atomicToUsdText } from "../platform/money.js";

// The A2A agent card (protocol 0.3.0, card version 2.1.0), built from the live catalog:
// one skill per SKU family. Streaming and push notifications are off, as the spec states.

export const A2A_PROTOCOL_VERSION = "0.3.0";
export const AGENT_CARD_VERSION = "2.1.0";

export function agentCard(catalog: ListServicesResponse, baseUrl: string, serviceVersion: string): JsonObject {
  const families = new Map<string, ListServicesResponse["services"]>();
  for (const sku of catalog.services) families.set(sku.family, [...(families.get(sku.family) ?? []), sku]);
  const skills = [...families].map(([family, skus]) => ({
    id: family,
    name: family,
    description: skus
      .map((s) => `${s.skuId} (${s.priceAmount === undefined ? "retired" : `${atomicToUsdText(s.priceAmount)} USD`}): ${s.name}`)
      .join("; "),
    tags: [family, "x402", "usdc"],
    examples: skus.filter((s) => !s.retired).map((s) => `POST ${s.path}`),
    inputModes: ["application/json"],
    outputModes: ["application/json"],
  }));
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    version: AGENT_CARD_VERSION,
    name: "svc",
    description: "Pay-per-call agent services exchange: a catalog of services paid per call with x402 (USDC, EIP-3009), an escrowed marketplace, witnesses, reputation and a public proof rail.",
    url: `${baseUrl}/a2a/jsonrpc`,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url: `${baseUrl}/a2a/jsonrpc`, transport: "JSONRPC" }],
    provider: { organization: "svc operator", url: baseUrl },
    documentationUrl: `${baseUrl}/v1/skill.md`,
    capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: true },
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key from POST /v1/agents/register" } },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills,
    kit: { kit_version: catalog.kit?.kitVersion ?? "", min_kit_version: catalog.kit?.minKitVersion ?? "" },
  };
}

import type { JsonObject } from "@bufbuild/protobuf";
import type { ListServicesResponse } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { atomicToUsdText } from "../platform/money.js";
import { X402_EXTENSION_URI } from "./x402-extension.js";

// The A2A agent card (protocol 0.3.0, card version 2.1.0), built from the live catalog:
// one skill per SKU family. Streaming and push notifications are off, as the spec states. SKUs are
// called over JSON-RPC at `/a2a/jsonrpc` (message/send, tasks/get) and paid with the a2a-x402 extension.

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
    examples: skus
      .filter((s) => !s.retired)
      .flatMap((s) => [`POST ${s.path}`, `A2A message/send with a data part {"sku_id": "${s.skuId}", "input": {...}}`]),
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
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: true,
      extensions: [
        {
          uri: X402_EXTENSION_URI,
          description: "SKU calls are paid with x402 (USDC, EIP-3009, exact scheme): an unpaid call answers input-required with x402.payment.required; resubmit on the same task with x402.payment.payload in the message metadata.",
          required: true,
        },
      ],
    },
    securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key from POST /v1/agents/register" } },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills,
    kit: { kit_version: catalog.kit?.kitVersion ?? "", min_kit_version: catalog.kit?.minKitVersion ?? "" },
  };
}

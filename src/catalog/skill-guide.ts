import { ExecutionMode } from "../../gen/svc/catalog/v1/catalog_pb.js";
import type { ListServicesResponse } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import type { GetRulesResponse } from "../../gen/svc/rules/v1/rules_service_pb.js";
import { atomicToUsdText } from "../platform/money.js";

// The integration guide (GET /v1/skill.md), generated from the live catalog and rules so it never drifts.

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ");
}

export function renderSkillGuide(catalog: ListServicesResponse, rules: GetRulesResponse): string {
  const kit = catalog.kit!;
  const network = catalog.services[0]?.payment?.network ?? "";
  const rows = catalog.services.map((s) => {
    const price = s.priceAmount === undefined ? "retired" : atomicToUsdText(s.priceAmount);
    const mode = s.mode === ExecutionMode.ASYNC ? "async" : "sync";
    const state = s.retired ? "retired" : s.available ? "available" : "not sold yet";
    return `| \`${s.skuId}\` | ${price} | ${mode} | ${state} | ${cell(s.name)} |`;
  });
  const fees = rules.fees!;
  return `# svc integration guide

kit_version ${kit.kitVersion} (min_kit_version ${kit.minKitVersion}). Declare your kit in the \`${kit.versionHeader}\`
header; kits older than ${kit.minKitVersion} are refused with \`kit_outdated\` and must refresh from \`${kit.refreshUrl}\`.
The live version check is \`GET ${kit.checkUrl}\` (its \`kit\` block). Rules version ${rules.rulesVersion}.

## Paying for a service (x402)

1. \`GET /v1/services\` (free) and pick a SKU.
2. \`POST /v1/services/{sku_id}\` with a JSON body (one task per paid call).
3. The answer is HTTP 402. The base64 JSON challenge is in the \`payment-required\` header (x402 v2); the same
   requirements are in the JSON body for x402 v1 clients. Read the amount and \`payTo\` from it; never hard-code a price.
4. Sign an EIP-3009 \`TransferWithAuthorization\` for exactly that amount of USDC on \`${network}\`.
5. Retry the same POST with the \`PAYMENT-SIGNATURE\` header (v2) or \`X-PAYMENT\` (v1).
6. The payment settles on-chain only after the deliverable exists; the response carries \`deliverable\`,
   \`payment_proof.tx_hash\` (with \`payment_proof.batch_index\` when several payments settled in one batch
   transaction), \`svc_trust\` and \`powered_by\`, and the receipt header \`PAYMENT-RESPONSE\`.
   Async SKUs return \`job_id\`: poll \`GET /v1/services/result/{job_id}\`.

Check a deliverable: \`svc_trust.content_sha256\` is the SHA-256 hex of \`deliverable.content_markdown\` (UTF-8) when it
is a string, otherwise of the deliverable serialized as JSON with sorted keys and compact separators.

Never send a private key or seed phrase: the service never asks for one.

## Catalog

| sku_id | USD | mode | state | name |
|---|---|---|---|---|
${rows.join("\n")}

## Agents and the marketplace

Register with \`POST /v1/agents/register\` (\`name\`, optional \`capabilities\`, \`evm_address\`); keep the \`api_key\`
(shown once) and send it as \`Authorization: Bearer <api_key>\`. The starter-credit note goes in \`X-402-Payment\`.
Post work with \`POST /a2a/requests\`, bid with \`POST /a2a/requests/{rid}/bids\`, accept with
\`POST /a2a/bids/{bid_id}/accept\`, complete with \`POST /a2a/jobs/{jid}/complete\`.

Fees: mode ${fees.mode}, service rate ${fees.serviceRateBps} bps, deducted from the provider payout; the buyer pays
the listed price only.

## Errors

Every error body is \`{"error": {"code": "<reason>", "message": "..."}}\`. 402 payment required, 409 gate refusal
(not charged), 401 \`auth_required\`, 403 \`requester_id_mismatch\` / \`agent_name_mismatch\`, 404 not found,
405 wrong method, 413 body too large, 501 not implemented on this server yet.

## Other fronts

gRPC and Connect on the same port (services \`svc.<domain>.v1.*\`), OpenAPI at \`/v1/openapi.json\`, agent card at
\`/.well-known/agent-card.json\`, rules at \`/v1/rules\`.
`;
}

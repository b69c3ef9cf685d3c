import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { CatalogService } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { RulesService } from "../../gen/svc/rules/v1/rules_service_pb.js";
import { PaymentService } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { FacilitatorService } from "../../gen/svc/payment/v1/facilitator_service_pb.js";
import { RegistryService } from "../../gen/svc/registry/v1/registry_service_pb.js";
import { ReputationService } from "../../gen/svc/reputation/v1/reputation_service_pb.js";
import { MarketplaceService } from "../../gen/svc/marketplace/v1/marketplace_service_pb.js";
import { WitnessService } from "../../gen/svc/witness/v1/witness_service_pb.js";
import { ProofService } from "../../gen/svc/proof/v1/proof_service_pb.js";
import { MarketsService } from "../../gen/svc/markets/v1/markets_service_pb.js";
import type { DocumentRoute, RestContext, RestResult, RestRoute } from "./route-table.js";
import { catalogToLegacy } from "./catalog-json.js";
import { PASSPORT_HEADERS, renderPassport } from "../registry/passport-html.js";

// The spec's REST surface, route by route. Every spec endpoint is here; those whose RPC is not
// implemented yet answer 501 `unimplemented` (and are never charged).

/** Base path of the secondary marketplace client API (the spec's `{marketplace_base_url}`). */
export const MARKETS_BASE = "/markets-api";

const markdown = (json: JsonValue): RestResult => ({
  status: 200,
  headers: { "content-type": "text/markdown; charset=utf-8" },
  body: String((json as JsonObject).markdown ?? ""),
});

/** The message inside a single-field response (`{request: {...}}` -> `{...}`), as the spec's routes answer. */
const unwrap = (field: string, status = 200, extra: JsonObject = {}) => (json: JsonValue): RestResult => ({ status, body: { ...((json as JsonObject)[field] as JsonObject), ...extra } });

/** Bids also carry the integration guide's name for the price. */
const bidJson = (bid: JsonObject): JsonObject => (bid.price_usd === undefined ? bid : { ...bid, price_per_call_usd: bid.price_usd });

const callBody = (ctx: RestContext): JsonValue => ({ sku_id: ctx.params.sku_id!, input: ctx.body ?? {} });

const bidBody = (ctx: RestContext): JsonValue => {
  // The interface description names the price `price_usd`, the integration guide `price_per_call_usd`.
  const body = { ...((ctx.body ?? {}) as JsonObject) };
  if (body.price_usd === undefined && body.price_per_call_usd !== undefined) body.price_usd = body.price_per_call_usd;
  return { ...body, ...ctx.params };
};

function requestJson(json: JsonValue, status: number): RestResult {
  const request = (json as JsonObject).request as JsonObject;
  return { status, body: { ...request, bids: ((request.bids ?? []) as JsonObject[]).map(bidJson) } };
}

export interface DocumentHandlers {
  openapi: DocumentRoute["handler"];
  agentCard: DocumentRoute["handler"];
  readiness: DocumentRoute["handler"];
}

export function restRoutes(docs: DocumentHandlers): RestRoute[] {
  const C = CatalogService.method;
  const P = PaymentService.method;
  const F = FacilitatorService.method;
  const R = RegistryService.method;
  const M = MarketplaceService.method;
  const W = WitnessService.method;
  const PR = ProofService.method;
  const MK = MarketsService.method;
  return [
    // Discovery and proofs (free, no auth).
    { kind: "rpc", method: "GET", path: "/v1/services", rpc: C.listServices, tag: "catalog", summary: "The SKU catalog", response: (j) => ({ status: 200, body: catalogToLegacy(j) }), stable: true },
    { kind: "rpc", method: "GET", path: "/v1/skill.md", rpc: C.getSkillGuide, tag: "catalog", summary: "Markdown integration guide", response: markdown },
    { kind: "rpc", method: "GET", path: "/v1/health", rpc: C.getHealth, tag: "catalog", summary: "Liveness, with database readiness" },
    // Liveness for orchestrators: the process answers; no dependency is checked (a dead database must not restart every server).
    { kind: "document", method: "GET", path: "/v1/health/live", tag: "catalog", summary: "Liveness: 200 while the process serves; no dependency checks", handler: () => ({ status: 200, headers: { "cache-control": "no-store" }, body: { status: "ok" } }) },
    { kind: "document", method: "GET", path: "/v1/health/ready", tag: "catalog", summary: "Readiness (database, chain RPC, facilitator): 200 when every dependency is ready, else 503", handler: docs.readiness },
    { kind: "rpc", method: "GET", path: "/v1/rules", rpc: RulesService.method.getRules, tag: "rules", summary: "The rules document" },
    { kind: "document", method: "GET", path: "/v1/openapi.json", tag: "catalog", summary: "OpenAPI 3.1 description of this REST surface", handler: docs.openapi },
    { kind: "document", method: "GET", path: "/.well-known/agent-card.json", tag: "a2a", summary: "A2A agent card (protocol 0.3.0)", handler: docs.agentCard },
    { kind: "document", method: "GET", path: "/.well-known/agent.json", tag: "a2a", summary: "A2A agent card at its 0.2 location", handler: docs.agentCard },
    { kind: "rpc", method: "GET", path: "/v1/proofs/settlements", rpc: PR.listSettlementProofs, tag: "proofs", summary: "Settlement proofs, newest first" },
    { kind: "rpc", method: "GET", path: "/v1/proofs/settlement/{tx_hash}", rpc: PR.getSettlementProof, tag: "proofs", summary: "One settlement proof" },
    { kind: "rpc", method: "GET", path: "/v1/proofs/keys", rpc: PR.getSigningKeys, tag: "proofs", summary: "Public keys that verify proof signatures" },
    { kind: "rpc", method: "GET", path: "/v1/proofs/{proof_id}", rpc: PR.getProof, tag: "proofs", summary: "Any proof record with its inclusion proof" },
    { kind: "rpc", method: "POST", path: "/v1/seals/{seal_id}/verify", rpc: PR.verifySeal, tag: "proofs", summary: "Verify content against a single-use seal (the first match uses it)" },

    // Paid SKU calls.
    { kind: "rpc", method: "POST", path: "/v1/services/{sku_id}", rpc: P.callService, tag: "payment", auth: "x402", summary: "One paid call of a SKU (x402)", request: callBody },
    { kind: "rpc", method: "GET", path: "/v1/services/result/{job_id}", rpc: P.getServiceResult, tag: "payment", summary: "Poll an async job" },
    { kind: "rpc", method: "POST", path: "/v1/dev/faucet", rpc: P.mintTestFunds, tag: "payment", summary: "Mint test USDC on the embedded dev chain (dev chain only)" },
    { kind: "rpc", method: "POST", path: "/facilitator/verify", rpc: F.verify, codec: "proto", tag: "facilitator", summary: "x402 facilitator: verify a payment" },
    { kind: "rpc", method: "POST", path: "/facilitator/settle", rpc: F.settle, codec: "proto", tag: "facilitator", summary: "x402 facilitator: settle a payment" },
    { kind: "rpc", method: "GET", path: "/facilitator/supported", rpc: F.getSupported, codec: "proto", tag: "facilitator", summary: "x402 facilitator: supported kinds" },

    // Identity.
    { kind: "rpc", method: "POST", path: "/v1/agents/register", rpc: R.registerAgent, successStatus: 201, tag: "registry", summary: "Register an agent" },
    { kind: "rpc", method: "POST", path: "/a2a/agents/{agent_id}/wallet", rpc: R.setPayoutWallet, auth: "bearer", tag: "registry", summary: "Set the payout wallet" },
    { kind: "rpc", method: "POST", path: "/a2a/agents/{agent_id}/callback", rpc: R.setCallback, auth: "bearer", tag: "registry", summary: "Set the webhook callback URL" },
    { kind: "rpc", method: "GET", path: "/a2a/agents/{agent_id}/webhooks", rpc: R.listWebhookDeliveries, auth: "bearer", tag: "registry", summary: "Webhook delivery log" },
    { kind: "rpc", method: "POST", path: "/a2a/agents/{agent_id}/keys/rotate", rpc: R.rotateApiKey, auth: "bearer", tag: "registry", summary: "Rotate the API key" },
    { kind: "rpc", method: "POST", path: "/a2a/agents/{agent_id}/identity", rpc: R.linkOnchainIdentity, auth: "bearer", tag: "registry", summary: "Link an ERC-8004 identity" },
    { kind: "rpc", method: "GET", path: "/a2a/passport/{agent}", rpc: R.getPassport, tag: "registry", summary: "Public passport page (HTML)", response: (j) => ({ status: 200, headers: PASSPORT_HEADERS, body: renderPassport((j as JsonObject).passport as JsonObject) }) },
    { kind: "rpc", method: "GET", path: "/a2a/agents/{name}/reputation", rpc: ReputationService.method.getAgentReputation, tag: "reputation", summary: "Reputation of any agent" },
    { kind: "rpc", method: "GET", path: "/a2a/agents/{name}/instructions", rpc: R.getAgentInstructions, tag: "registry", summary: "Agent instructions with the kit block" },
    { kind: "rpc", method: "GET", path: "/a2a/agents/{name}/registration.json", rpc: R.getAgentRegistration, tag: "registry", summary: "ERC-8004 registration file", response: (j) => ({ status: 200, body: (j as JsonObject).registration! }) },
    { kind: "rpc", method: "GET", path: "/v1/wallet/balance", rpc: R.getWalletBalance, auth: "note", tag: "registry", summary: "Starter-credit balance of the note in X-402-Payment" },

    // Marketplace.
    { kind: "rpc", method: "GET", path: "/a2a/requests/open", rpc: M.listOpenRequests, tag: "marketplace", summary: "Open requests, newest first" },
    { kind: "rpc", method: "POST", path: "/a2a/requests", rpc: M.createRequest, successStatus: 201, auth: "bearer+note", tag: "marketplace", summary: "Post a request with escrowed budget", response: (j) => requestJson(j, 201) },
    { kind: "rpc", method: "GET", path: "/a2a/requests/{request_id}", rpc: M.getRequest, tag: "marketplace", summary: "A request with its bids and jobs", response: (j) => requestJson(j, 200) },
    { kind: "rpc", method: "POST", path: "/a2a/requests/{request_id}/cancel", rpc: M.cancelRequest, auth: "bearer", tag: "marketplace", summary: "Cancel an open request", response: (j) => requestJson(j, 200) },
    { kind: "rpc", method: "POST", path: "/a2a/requests/{request_id}/bids", rpc: M.submitBid, successStatus: 201, auth: "bearer", tag: "marketplace", summary: "Bid on a request", request: bidBody, response: (j) => ({ status: 201, body: { ...bidJson((j as JsonObject).bid as JsonObject), status: "bid_submitted" } }) },
    { kind: "rpc", method: "POST", path: "/a2a/bids/{bid_id}/accept", rpc: M.acceptBid, auth: "bearer", tag: "marketplace", summary: "Accept a bid (requester)", response: unwrap("job") },
    { kind: "rpc", method: "GET", path: "/a2a/jobs/{job_id}", rpc: M.getJob, auth: "bearer", tag: "marketplace", summary: "A job (requester or assigned provider)", response: unwrap("job") },
    { kind: "rpc", method: "POST", path: "/a2a/jobs/{job_id}/complete", rpc: M.completeJob, auth: "bearer", tag: "marketplace", summary: "Complete a job (assigned provider)", response: unwrap("job") },
    { kind: "rpc", method: "GET", path: "/v1/admin/payouts", rpc: M.listPayouts, auth: "operator", tag: "marketplace", summary: "Payouts (operator)" },
    { kind: "rpc", method: "POST", path: "/v1/admin/payouts/{payout_id}/release", rpc: M.releasePayout, auth: "operator", tag: "marketplace", summary: "Release a payout (operator)" },
    { kind: "rpc", method: "GET", path: "/v1/admin/disputes", rpc: M.listDisputes, auth: "operator", tag: "marketplace", summary: "Disputes (operator)" },
    { kind: "rpc", method: "POST", path: "/v1/admin/disputes/{dispute_id}/decide", rpc: M.decideDispute, auth: "operator", tag: "marketplace", summary: "Decide a dispute: the operator panel's verdict" },

    // Witness program.
    { kind: "rpc", method: "POST", path: "/a2a/witness/enroll", rpc: W.enrollWitness, auth: "bearer", tag: "witness", summary: "Enroll as a witness" },
    { kind: "rpc", method: "GET", path: "/a2a/witness/seats", rpc: W.listSeats, tag: "witness", summary: "Open witness seats" },
    { kind: "rpc", method: "GET", path: "/a2a/jobs/{job_id}/deliverable", rpc: W.getJobDeliverable, auth: "bearer", tag: "witness", summary: "Released deliverable for a seat holder" },
    { kind: "rpc", method: "POST", path: "/a2a/witness/{job_id}/attest", rpc: W.attest, auth: "bearer", tag: "witness", summary: "Attest to a deliverable" },

    // Secondary marketplace client API (an API key, when given on the free reads, counts toward the tier's daily limit).
    { kind: "rpc", method: "GET", path: `${MARKETS_BASE}/markets`, rpc: MK.listMarkets, tag: "markets", summary: "Prediction markets (filters status, category)" },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/markets/predict`, rpc: MK.predict, successStatus: 201, auth: "bearer", tag: "markets", summary: "Stake ecash (X-402-Payment) on yes or no; fee 0.5 percent of the stake", response: (j) => ({ status: 201, body: j }) },
    { kind: "rpc", method: "GET", path: `${MARKETS_BASE}/markets/{market_id}`, rpc: MK.getMarket, tag: "markets", summary: "One market", response: unwrap("market") },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/compliance/check`, rpc: MK.checkCompliance, auth: "bearer", tag: "markets", summary: "Compliance risk of a protocol (0.50 USD by x402, or the monthly plan)" },
    { kind: "rpc", method: "GET", path: `${MARKETS_BASE}/signals/latest`, rpc: MK.getLatestSignals, auth: "bearer", tag: "markets", summary: "Latest signals (Contributor tier or above)" },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/agents/proofs`, rpc: MK.submitAgentProof, successStatus: 201, auth: "bearer", tag: "markets", summary: "Record an agent proof (0.001 USD by x402)", response: (j) => ({ status: 201, body: j }) },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/subscriptions`, rpc: MK.subscribe, successStatus: 201, auth: "bearer", tag: "markets", summary: "Buy a month of a plan: contributor or operator in ecash sats, compliance by x402", response: (j) => ({ status: 201, body: j }) },
    { kind: "rpc", method: "GET", path: `${MARKETS_BASE}/account`, rpc: MK.getAccount, auth: "bearer", tag: "markets", summary: "The caller's tier, calls today, reset time, balance, plans and positions" },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/fleet/join`, rpc: MK.joinFleet, auth: "bearer", tag: "markets", summary: "Join an Operator's fleet", response: unwrap("fleet") },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/fleet/leave`, rpc: MK.leaveFleet, auth: "bearer", tag: "markets", summary: "Leave the caller's fleet" },
    { kind: "rpc", method: "GET", path: `${MARKETS_BASE}/fleet/{operator}`, rpc: MK.getFleet, tag: "markets", summary: "An Operator's public fleet listing", response: unwrap("fleet") },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/admin/markets`, rpc: MK.createMarket, successStatus: 201, auth: "operator", tag: "markets", summary: "Create a market (operator)", response: unwrap("market", 201) },
    { kind: "rpc", method: "POST", path: `${MARKETS_BASE}/admin/markets/{market_id}/resolve`, rpc: MK.resolveMarket, auth: "operator", tag: "markets", summary: "Resolve a market and pay the winners (operator)" },
  ];
}

import type { JsonObject } from "@bufbuild/protobuf";
import { createClient, createRouterTransport, type ConnectRouter } from "@connectrpc/connect";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CatalogService, ListServicesResponseSchema } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { GetRulesResponseSchema, RulesService } from "../../gen/svc/rules/v1/rules_service_pb.js";
import { GetProofResponseSchema, GetSettlementProofResponseSchema, ListSettlementProofsResponseSchema, ProofService } from "../../gen/svc/proof/v1/proof_service_pb.js";
import { GetAgentReputationResponseSchema, ReputationService } from "../../gen/svc/reputation/v1/reputation_service_pb.js";
import { GetServiceResultResponseSchema, PaymentService } from "../../gen/svc/payment/v1/payment_service_pb.js";
import { toLegacyJson } from "../rest/legacy-json.js";
import { catalogToLegacy } from "../rest/catalog-json.js";
import { GET_RESULT_TOOL } from "./paid-tools.js";

// The free tools: the catalog, the rules, proofs, agent reputation and async results. Each calls the
// service in-process through a router transport (the same implementations the REST shim reaches) and
// answers the same snake_case JSON as the matching HTTP route.

export interface FreeTool {
  tool: Tool;
  input: z.ZodType<Record<string, unknown>>;
  run(args: Record<string, unknown>): Promise<JsonObject>;
}

function inputSchema(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input" }) as JsonObject;
  return rest as Tool["inputSchema"];
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

function freeTool<S extends z.ZodObject>(name: string, title: string, description: string, input: S, run: (args: z.output<S>) => Promise<JsonObject>): FreeTool {
  return {
    tool: { name, title, description: `${description} Free: no payment.`, inputSchema: inputSchema(input), annotations: { title, ...READ_ONLY } },
    input: input as unknown as z.ZodType<Record<string, unknown>>,
    run: (args) => run(args as z.output<S>),
  };
}

const id = (what: string) => z.string().trim().min(1, `${what} is required`).max(200);

/** The free tools, bound to the services of this server. */
export function freeTools(routes: (router: ConnectRouter) => void): FreeTool[] {
  const transport = createRouterTransport(routes);
  const catalog = createClient(CatalogService, transport);
  const rules = createClient(RulesService, transport);
  const proofs = createClient(ProofService, transport);
  const reputation = createClient(ReputationService, transport);
  const payment = createClient(PaymentService, transport);
  return [
    freeTool("list_services", "Catalog", "The SKU catalog (GET /v1/services): every SKU with its price, mode, availability and input/output JSON Schemas.", z.object({}), async () =>
      catalogToLegacy(toLegacyJson(ListServicesResponseSchema, await catalog.listServices({}))),
    ),
    freeTool("get_rules", "Rules", "The rules document (GET /v1/rules): fees, reputation formula, bid scoring, witness program.", z.object({}), async () =>
      toLegacyJson(GetRulesResponseSchema, await rules.getRules({})),
    ),
    freeTool("get_proof", "Proof by id", "Any proof record with its inclusion proof (GET /v1/proofs/{proof_id}).", z.object({ proof_id: id("proof_id").describe("the proof id") }), async (a) =>
      toLegacyJson(GetProofResponseSchema, await proofs.getProof({ proofId: a.proof_id })),
    ),
    freeTool(
      "get_settlement_proof",
      "Proof by settlement transaction",
      "The settlement proof of a paid call by its transaction hash (GET /v1/proofs/settlement/{tx_hash}), e.g. the `transaction` of an x402/payment-response.",
      z.object({ tx_hash: z.string().regex(/^0x[0-9a-fA-F]{64}(:\d{1,6})?$/, "tx_hash must be a 0x-prefixed 32-byte hash, or hash:batch_index").describe("settlement transaction hash; `{tx_hash}:{batch_index}` for a payment settled in a batch") }),
      async (a) => toLegacyJson(GetSettlementProofResponseSchema, await proofs.getSettlementProof({ txHash: a.tx_hash })),
    ),
    freeTool(
      "list_settlement_proofs",
      "Settlement proofs",
      "Settlement proofs, newest first (GET /v1/proofs/settlements).",
      z.object({ limit: z.number().int().min(1).max(500).optional().describe("maximum records, default 50"), page_token: z.string().max(500).optional().describe("next_page_token of the previous page") }),
      async (a) => toLegacyJson(ListSettlementProofsResponseSchema, await proofs.listSettlementProofs({ limit: a.limit ?? 0, pageToken: a.page_token ?? "" })),
    ),
    freeTool("get_reputation", "Agent reputation", "The reputation of any registered agent by id or name (GET /a2a/agents/{name}/reputation).", z.object({ name: id("name").describe("agent id or name, case-insensitive") }), async (a) =>
      toLegacyJson(GetAgentReputationResponseSchema, await reputation.getAgentReputation({ name: a.name })),
    ),
    freeTool(
      GET_RESULT_TOOL,
      "Async result",
      "Polls the job of an async paid tool (GET /v1/services/result/{job_id}): status pending until the deliverable is ready; failed jobs are refunded.",
      z.object({ job_id: id("job_id").describe("the job_id a paid async tool answered") }),
      async (a) => toLegacyJson(GetServiceResultResponseSchema, await payment.getServiceResult({ jobId: a.job_id })),
    ),
  ];
}

import { createRouterTransport, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { DataSource } from "typeorm";
import { CatalogService } from "../gen/svc/catalog/v1/catalog_service_pb.js";
import { RulesService } from "../gen/svc/rules/v1/rules_service_pb.js";
import { PaymentService } from "../gen/svc/payment/v1/payment_service_pb.js";
import { FacilitatorService } from "../gen/svc/payment/v1/facilitator_service_pb.js";
import { RegistryService } from "../gen/svc/registry/v1/registry_service_pb.js";
import { ReputationService } from "../gen/svc/reputation/v1/reputation_service_pb.js";
import { MarketplaceService } from "../gen/svc/marketplace/v1/marketplace_service_pb.js";
import { WitnessService } from "../gen/svc/witness/v1/witness_service_pb.js";
import { ProofService } from "../gen/svc/proof/v1/proof_service_pb.js";
import { MarketsService } from "../gen/svc/markets/v1/markets_service_pb.js";
import type { Config } from "./config.js";
import type { Logger } from "./platform/log.js";
import { databaseReadiness } from "./platform/db/readiness.js";
import { kitVersionInterceptor, loggingInterceptor, requestIdInterceptor } from "./platform/rpc/interceptors.js";
import type { SkuDefinition } from "./catalog/catalog-config.js";
import { CatalogServiceImpl } from "./catalog/catalog.service.js";
import { RulesServiceImpl } from "./rules/rules.service.js";
import type { RuleSection } from "./rules/rules-document.js";
import { createRestShim } from "./rest/rest-shim.js";
import { RouteTable } from "./rest/route-table.js";
import { restRoutes } from "./rest/routes.js";
import { toLegacyJson } from "./rest/legacy-json.js";
import { GetHealthResponseSchema, HealthStatus } from "../gen/svc/catalog/v1/catalog_service_pb.js";
import { openApiDocument } from "./openapi/openapi-document.js";
import { agentCard } from "./a2a/agent-card.js";

// Composition of one server: service implementations, interceptors, the Connect router (gRPC,
// gRPC-Web, Connect) and the REST shim as its fallback, all on one node handler.

export interface AppDeps {
  config: Config;
  log: Logger;
  ds: DataSource;
  skus: readonly SkuDefinition[];
  version: string;
  startedAt?: number;
}

/** Services whose RPCs are not implemented yet: registered empty, so every RPC answers Unimplemented. */
const NOT_YET_IMPLEMENTED = [PaymentService, FacilitatorService, RegistryService, ReputationService, MarketplaceService, WitnessService, ProofService, MarketsService];

/** Discovery RPCs stay open to clients with an outdated kit, so they can learn where to refresh. */
const KIT_EXEMPT_SERVICES = new Set([CatalogService.typeName, RulesService.typeName]);
const KIT_EXEMPT_METHODS = new Set([`${RegistryService.typeName}/GetAgentInstructions`]);

export function buildApp(deps: AppDeps) {
  const { config, log, ds } = deps;
  const liveRuleSections = new Set<RuleSection>();
  const rules = new RulesServiceImpl(liveRuleSections);
  const catalog = new CatalogServiceImpl({
    skus: deps.skus,
    network: config.network,
    isAvailable: () => false, // no SKU engine runs yet: nothing is sold
    rules: () => rules.getRules(),
    readiness: async () => [await databaseReadiness(ds)],
    chainInfo: () => undefined,
    databaseDialect: config.database.kind,
    version: deps.version,
    startedAt: deps.startedAt ?? Date.now(),
  });

  const routes = (router: ConnectRouter) => {
    router.service(CatalogService, catalog);
    router.service(RulesService, rules);
    for (const service of NOT_YET_IMPLEMENTED) router.service(service, {});
  };
  const interceptors: Interceptor[] = [
    requestIdInterceptor(),
    loggingInterceptor(log),
    kitVersionInterceptor(KIT_EXEMPT_SERVICES, KIT_EXEMPT_METHODS),
  ];
  const transport = createRouterTransport(routes, { router: { interceptors, readMaxBytes: config.maxBodyBytes } });

  const openApiCache = new Map<string, object>();
  const table = new RouteTable(
    restRoutes({
      openapi: (ctx) => {
        if (!openApiCache.has(ctx.baseUrl)) openApiCache.set(ctx.baseUrl, openApiDocument(table.routes, ctx.baseUrl));
        return { status: 200, body: openApiCache.get(ctx.baseUrl) as never };
      },
      agentCard: (ctx) => ({
        status: 200,
        headers: { "cache-control": "public, max-age=300" },
        body: agentCard(catalog.listServices(), ctx.baseUrl, deps.version),
      }),
      readiness: async () => {
        const health = await catalog.getHealth();
        return { status: health.status === HealthStatus.OK ? 200 : 503, body: toLegacyJson(GetHealthResponseSchema, health) };
      },
    }),
  );
  const restShim = createRestShim({ table, transport, maxBodyBytes: config.maxBodyBytes, log, publicBaseUrl: config.publicBaseUrl });

  const handler = connectNodeAdapter({ routes, interceptors, readMaxBytes: config.maxBodyBytes, fallback: restShim });
  return { handler, transport, table };
}

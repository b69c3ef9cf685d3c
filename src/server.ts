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
import { chainReadiness } from "./chain/chain-readiness.js";
import { kitVersionInterceptor, loggingInterceptor, requestIdInterceptor, rpcMetricsInterceptor } from "./platform/rpc/interceptors.js";
import { AppMetrics } from "./platform/metrics/app-metrics.js";
import { registerStateGauges } from "./platform/metrics/state-gauges.js";
import { observedHttp } from "./platform/metrics/observed-http.js";
import { routeLabeler } from "./platform/metrics/route-label.js";
import { observedFacilitator } from "./x402/observed-facilitator.js";
import { facilitatorReadiness } from "./x402/facilitator-readiness.js";
import { createConnectRouter } from "@connectrpc/connect";
import { databaseErrorsInterceptor } from "./platform/rpc/database-errors-interceptor.js";
import type { SkuDefinition } from "./catalog/catalog-config.js";
import { CatalogServiceImpl } from "./catalog/catalog.service.js";
import { RulesServiceImpl } from "./rules/rules.service.js";
import type { RuleSection } from "./rules/rules-document.js";
import { createRestShim } from "./rest/rest-shim.js";
import { createDirectTransport } from "./rest/direct-transport.js";
import { agentFronts, withFronts } from "./fronts/agent-fronts.js";
import { withCors } from "./platform/http/cors.js";
import { withBodyLimit } from "./platform/http/body-limit.js";
import { withSecurityHeaders } from "./platform/http/security-headers.js";
import { jobPriorityOf } from "./markets/job-priority.js";
import { RouteTable } from "./rest/route-table.js";
import { restRoutes } from "./rest/routes.js";
import { toLegacyJson } from "./rest/legacy-json.js";
import { ChainInfoSchema, GetHealthResponseSchema, HealthStatus } from "../gen/svc/catalog/v1/catalog_service_pb.js";
import { create } from "@bufbuild/protobuf";
import { openApiDocument } from "./openapi/openapi-document.js";
import { agentCard } from "./a2a/agent-card.js";
import type { ChainRuntime } from "./chain/chain-runtime.js";
import { chainIdentity, TransactionSender } from "./chain/tx-sender.js";
import { FEE_SCHEDULE } from "./fees/fee-schedule.js";
import { JobQueue } from "./jobs/job-queue.js";
import { JobWorker } from "./jobs/job-worker.js";
import { FacilitatorServiceImpl } from "./payment/facilitator.service.js";
import { PaymentServiceImpl } from "./payment/payment.service.js";
import { ProofServiceImpl } from "./proof/proof.service.js";
import { ProofSigner } from "./proof/proof-signer.js";
import { ProofAnchorer } from "./proof/proof-anchorer.js";
import { ReputationEngine } from "./reputation/reputation-engine.js";
import { WitnessServiceImpl } from "./witness/witness.service.js";
import type { Badge } from "./fees/fee-engine.js";
import { newId } from "./platform/ids.js";
import os from "node:os";
import { skuHandlers, type OutboundEngines } from "./skus/sku-handlers.js";
import { OpenAiCompatibleEngine } from "./llm/openai-compatible-engine.js";
import { LlmUsageLedger } from "./llm/llm-usage-ledger.js";
import { SharedCircuitBreakers } from "./policy/shared-circuit-breakers.js";
import { SharedNonceCounter } from "./platform/db/shared-nonces.js";
import { skuSchemas } from "./skus/sku-schemas.js";
import { SharedPayerRateLimiter } from "./policy/shared-rate-limit.js";
import { PolicyGates } from "./policy/policy-gates.js";
import { VenueClient } from "./market-data/venues.js";
import { AlertScheduler } from "./alerts/alert-scheduler.js";
import { EdgarClient } from "./filings/edgar-client.js";
import { EnforcementRecorder } from "./proof/enforcement-recorder.js";
import { domainSeparator } from "./x402/eip3009.js";
import { ARBITRATION_SKU } from "./skus/arbitration-dispute-settlement.js";
import type { SkuHandler } from "./skus/sku-handler.js";
import { AgentStore } from "./registry/agent-store.js";
import { registryDirectory } from "./registry/agent-directory.js";
import { SecretBox } from "./registry/credentials.js";
import { RegistryServiceImpl } from "./registry/registry.service.js";
import { OnchainIdentity } from "./registry/onchain-identity.js";
import { CompService } from "./registry/comp.service.js";
import { ReputationServiceImpl } from "./reputation/reputation.service.js";
import { WebhookDispatcher } from "./webhooks/webhook-outbox.js";
import { MarketplaceServiceImpl } from "./marketplace/marketplace.service.js";
import { PayoutReleaser } from "./marketplace/payout-releaser.js";
import { fundDevTreasury } from "./chain/dev-treasury.js";
import { createHash } from "node:crypto";
import { MULTICALL3_ADDRESS } from "./chain/artifacts.js";
import { BuiltInFacilitator, type SignerRecovery } from "./x402/builtin-facilitator.js";
import type { Facilitator } from "./x402/facilitator.js";
import { HttpFacilitator } from "./x402/http-facilitator.js";
import { PaymentGate } from "./x402/payment-gate.js";
import { withChallengeFastPath } from "./x402/challenge-fast-path.js";
import { PaymentStore } from "./x402/payment-store.js";
import { Reconciler } from "./x402/reconcile.js";
import { Refunder } from "./x402/refunds.js";
import { MarketsServiceImpl } from "./markets/markets.service.js";
import { MarketsGrant, marketsSkuHandlers, MARKETS_SKU_DEFINITIONS } from "./markets/markets-skus.js";
import { CashuRedeemer } from "./ecash/cashu-redeemer.js";

// Composition of one server: service implementations, interceptors, the Connect router (gRPC,
// gRPC-Web, Connect) and the REST shim as its fallback, all on one node handler.

export interface AppDeps {
  config: Config;
  log: Logger;
  ds: DataSource;
  skus: readonly SkuDefinition[];
  version: string;
  chain: ChainRuntime;
  /** Signer recovery of the built-in facilitator (the benchmark swaps in viem's pure-JS one). */
  signatureRecovery?: SignerRecovery;
  /** SKU engines; the deployment's real ones when unset (tests inject failing engines here). */
  handlers?: ReadonlyMap<string, SkuHandler<any>>;
  startedAt?: number;
  /** false: unpaid calls take the normal path to their 402 (tests compare the two); default on. */
  challengeFastPath?: boolean;
}

/** Discovery RPCs stay open to clients with an outdated kit, so they can learn where to refresh. */
const KIT_EXEMPT_SERVICES = new Set([CatalogService.typeName, RulesService.typeName]);
const KIT_EXEMPT_METHODS = new Set([`${RegistryService.typeName}/GetAgentInstructions`]);

export function buildApp(deps: AppDeps) {
  const { config, log, ds, chain } = deps;
  // This app's Prometheus registry (GET /metrics); scrape-time gauges read the database.
  const metrics = new AppMetrics();
  registerStateGauges(metrics, ds, config.breaker.cooldownMs, log);
  const proofKey = { hmacKey: config.proofHmacKey, isDevelopmentKey: config.proofHmacKeyIsDev, signer: ProofSigner.fromFile(config.proofSigningKeyFile) };
  const feeBps = FEE_SCHEDULE.serviceRateBps; // catalog SKUs are sold by internal identities: never discounted
  const senderOptions = { resendAfterMs: config.settleResendAfterMs, timeoutMs: config.settleTimeoutMs, pollMs: chain.dev ? 25 : 1_000, log };
  // One sender per key per process; its nonces come from a counter in the database shared by every process
  // using the key (a counter idle for longer than a send can take is re-read from the chain).
  const senders = new Map<string, TransactionSender>();
  const sender = (account: ChainRuntime["facilitatorAccount"]) => {
    if (!account) return undefined;
    if (!senders.has(account.address)) {
      const nonces = new SharedNonceCounter(ds, () => chainIdentity(chain.publicClient, chain.chain.id), account.address, config.settleTimeoutMs + config.settleResendAfterMs);
      senders.set(account.address, new TransactionSender(chain.publicClient, account, chain.chain, { ...senderOptions, nonces }));
    }
    return senders.get(account.address);
  };
  const facilitator: Facilitator | undefined = config.facilitatorUrl
    ? new HttpFacilitator(config.facilitatorUrl, config.facilitatorTimeoutMs, config.facilitatorAuthToken)
    : chain.facilitatorAccount &&
      new BuiltInFacilitator(chain.network, chain.publicClient, sender(chain.facilitatorAccount)!, undefined, deps.signatureRecovery,
        // Batched settlement needs the batcher contract (always on the dev chain; a setting on a real chain).
        config.settlementBatcherAddress && { batcher: config.settlementBatcherAddress, windowMs: config.settleBatchWindowMs, max: config.settleBatchMax, eager: config.settleBatchEager }, log);
  if (!facilitator) throw new Error("no facilitator: set FACILITATOR_URL or FACILITATOR_PRIVATE_KEY");
  const store = new PaymentStore(ds);
  const jobs = new JobQueue(ds);
  const agents = new AgentStore(ds);
  const reputationEngine = new ReputationEngine(ds, log, `${os.hostname()}:${process.pid}:${newId("srv", 6)}`);
  const identity = new OnchainIdentity(chain, config.identityRegistryAddress);
  const internalWallets = new Set(
    [chain.treasury, chain.facilitatorAccount?.address, chain.faucetAccount?.address, chain.network.usdcAddress, MULTICALL3_ADDRESS, config.identityRegistryAddress, ...config.internalWallets]
      .filter((a): a is string => Boolean(a))
      .map((a) => a.toLowerCase()),
  );
  const comps = new CompService(ds, agents, chain, internalWallets);
  const safeFetch = { allow: config.safeFetchAllow, allowHttp: chain.dev };
  // Engines' outbound requests also pass the per-upstream circuit breakers (webhooks keep their own backoff),
  // shared by every process through the database; reads may lag another process's change by up to 250 ms.
  const breakers = new SharedCircuitBreakers(ds, { ...config.breaker, readCacheMs: 250 });
  const enginePolicy = { ...safeFetch, breakers };
  const outbound: OutboundEngines = {
    config,
    llm: config.llm ? new OpenAiCompatibleEngine(config.llm, enginePolicy, new LlmUsageLedger(ds, log)) : undefined,
    ds,
    chain,
    log,
    registry: { directory: registryDirectory(agents), reputationOf: (agentId) => reputationEngine.current(agentId) },
    policy: enginePolicy,
    venues: new VenueClient(config.marketVenueUrls, enginePolicy),
    priceCacheMs: config.priceCacheMs,
    edgar: new EdgarClient(config.edgar, config.edgar.userAgent, enginePolicy),
  };
  const handlers = deps.handlers ?? skuHandlers(registryDirectory(agents), (agentId) => reputationEngine.current(agentId), outbound);
  // oracle.alert-generator's alerts are evaluated on a schedule by every server (each alert once per interval).
  const alertScheduler = new AlertScheduler({ ds, venues: outbound.venues, intervalMs: config.alerts.evalIntervalMs, log });
  const skuMap = new Map(deps.skus.map((s) => [s.skuId, s]));
  // A refund, payout or anchor is sent by one server at a time under a lease on its row that covers a whole send.
  const sendLeaseMs = config.settleTimeoutMs + config.settleResendAfterMs + 30_000;
  const refunder = new Refunder(ds, store, jobs, chain, sender(chain.treasuryAccount), feeBps, sendLeaseMs);
  const policy = new PolicyGates(breakers, new SharedPayerRateLimiter(ds, config.payerRateLimit));
  // The markets API's USD-priced calls are internal SKUs of the one gate (never in the catalog).
  const marketsGrant = new MarketsGrant();
  const gate: PaymentGate = new PaymentGate({
    ds,
    store,
    facilitator: observedFacilitator(facilitator, metrics),
    outcomes: (outcome, reason) => metrics.payment(outcome, reason),
    jobs,
    skus: new Map([...skuMap, ...MARKETS_SKU_DEFINITIONS.map((s) => [s.skuId, s] as const)]),
    handlers: new Map([...handlers, ...marketsSkuHandlers(marketsGrant)]),
    challengeContext: { network: chain.network, treasury: chain.treasury, maxTimeoutSeconds: config.paymentTimeoutSeconds, feeBps },
    proofKey,
    log,
    duplicateWaitMs: 30_000,
    staleAfterMs: config.settleTimeoutMs,
    resolveInFlight: async (p) => void (await reconciler.reconcile(p)),
    canRefund: refunder.available,
    isOnboarded: (payer) => identity.isOnboarded(ds.manager, payer),
    enforcement: new EnforcementRecorder(ds, proofKey, domainSeparator({ ...chain.network.usdcDomain, chainId: chain.network.chainId, verifyingContract: chain.network.usdcAddress }), log),
    requestComp: (authorization) => comps.request(authorization),
    policy,
    jobPriority: (payer) => jobPriorityOf(ds.manager, payer, new Date()),
    // The worker is built below; it exists before the first call reaches the gate.
    nudgeWorkers: () => worker.nudge(),
  });
  const reconciler = new Reconciler({ store, jobs, chain, finalize: (id, tx, index) => gate.finalize(id, tx, index), retryEffects: () => gate.retryEffects(), log });
  const worker = new JobWorker({ ds, jobs, store, refunder, skus: skuMap, handlers, proofKey, log, concurrency: config.workerConcurrency, retentionMs: config.jobResultRetentionMs, manifest: (sku) => policy.manifest(sku, undefined), onRefunded: () => metrics.payment("refunded") });
  const payment = new PaymentServiceImpl({ gate, jobs, store, chain, faucetSender: sender(chain.faucetAccount), publicBaseUrl: config.publicBaseUrl, onJobAccepted: () => worker.nudge() });
  const facilitatorApi = new FacilitatorServiceImpl(facilitator, chain.treasury, config.facilitatorApiKey);
  // Anchors are sent by the facilitator key (it holds gas), or the treasury's when the facilitator is remote.
  const anchorSender = sender(chain.facilitatorAccount) ?? sender(chain.treasuryAccount);
  const anchorer = anchorSender && new ProofAnchorer(ds, chain, anchorSender, proofKey, log, { batchSize: config.anchorBatchSize, maxWaitMs: config.anchorMaxWaitMs, leaseMs: sendLeaseMs });
  const proofs = new ProofServiceImpl(ds, proofKey, anchorer && { address: anchorer.address, network: chain.network.caip2 });
  const box = new SecretBox(config.webhookSecretKey);
  const registry = new RegistryServiceImpl({
    ds,
    agents,
    box,
    starterCreditAtomic: config.starterCreditAtomic,
    safeFetch,
    internalWallets,
    network: chain.network,
    identity,
    publicBaseUrl: config.publicBaseUrl,
  });
  const reputation = new ReputationServiceImpl(agents, reputationEngine);
  const witness = new WitnessServiceImpl(ds, agents, proofKey, reputationEngine);
  const releaser = new PayoutReleaser(ds, chain, sender(chain.treasuryAccount), proofKey, log, config.starterCreditCashout, (agentId) => reputationEngine.refresh(agentId), sendLeaseMs);
  const marketplace = new MarketplaceServiceImpl({
    ds,
    agents,
    releaser,
    badgeOf: async (agentId) => (await reputationEngine.current(agentId)).badge as Badge,
    requestTtlSeconds: config.requestTtlSeconds,
    operatorKeyDigest: config.operatorApiKey ? createHash("sha256").update(config.operatorApiKey).digest() : undefined,
    disputes: { proofKey, sku: skuMap.get(ARBITRATION_SKU)!, onDecided: (agentId) => reputationEngine.refresh(agentId) },
    log,
  });
  const markets = new MarketsServiceImpl({
    ds,
    agents,
    gate,
    grant: marketsGrant,
    ecash: config.cashu.mints.length ? new CashuRedeemer({ ds, mints: config.cashu.mints, policy: enginePolicy, proofKey: config.cashu.proofKey, timeoutMs: config.cashu.timeoutMs, log }) : undefined,
    ecashMints: config.cashu.mints,
    operatorKeyDigest: config.operatorApiKey ? createHash("sha256").update(config.operatorApiKey).digest() : undefined,
    publicBaseUrl: config.publicBaseUrl,
    log,
  });
  let expiry: NodeJS.Timeout | undefined;
  const webhooks = new WebhookDispatcher({ ds, box, policy: safeFetch, log, backoffBaseMs: config.webhookBackoffBaseMs, retryWindowMs: config.webhookRetryMs });
  // Badge gates protect the internal agents, which this deployment does not run yet.
  const liveRuleSections = new Set<RuleSection>(["fees", "bid_scoring", "reputation", "witness_program"]);
  const rules = new RulesServiceImpl(liveRuleSections);
  const schemas = skuSchemas(handlers);
  const catalog = new CatalogServiceImpl({
    skus: deps.skus,
    network: config.network,
    isAvailable: (skuId) => handlers.has(skuId) && (skuMap.get(skuId)?.mode === "sync" || refunder.available),
    schemas,
    rules: () => rules.getRules(),
    readiness: () => Promise.all([databaseReadiness(ds), chainReadiness(chain), facilitatorReadiness(facilitator, chain)]),
    chainInfo: () => create(ChainInfoSchema, { network: chain.network.caip2, asset: chain.network.usdcAddress, payTo: chain.treasury, rpcUrl: chain.dev ? chain.rpcUrl : "", devChain: chain.dev }),
    databaseDialect: config.database.kind,
    version: deps.version,
    startedAt: deps.startedAt ?? Date.now(),
  });

  const routes = (router: ConnectRouter) => {
    router.service(CatalogService, catalog);
    router.service(RulesService, rules);
    router.service(PaymentService, payment);
    router.service(FacilitatorService, facilitatorApi);
    router.service(ProofService, proofs);
    router.service(RegistryService, registry);
    router.service(ReputationService, reputation);
    router.service(MarketplaceService, marketplace);
    router.service(WitnessService, witness);
    router.service(MarketsService, markets);
  };
  const interceptors: Interceptor[] = [
    requestIdInterceptor(),
    rpcMetricsInterceptor(metrics),
    loggingInterceptor(log),
    kitVersionInterceptor(KIT_EXEMPT_SERVICES, KIT_EXEMPT_METHODS),
    databaseErrorsInterceptor(),
  ];
  const transport = createRouterTransport(routes, { router: { interceptors, readMaxBytes: config.maxBodyBytes } });

  const openApiCache = new Map<string, object>();
  const table = new RouteTable(
    restRoutes({
      openapi: (ctx) => {
        if (!openApiCache.has(ctx.baseUrl)) openApiCache.set(ctx.baseUrl, openApiDocument(table.routes, ctx.baseUrl, schemas));
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
  const restShim = createRestShim({ table, transport: createDirectTransport(routes, interceptors, transport), maxBodyBytes: config.maxBodyBytes, log, publicBaseUrl: config.publicBaseUrl });

  const fronts = agentFronts({ config, log, ds, gate, jobs, catalog, skus: skuMap, handlers, routes, version: deps.version });
  const rpcRouter = createConnectRouter();
  routes(rpcRouter);
  const routeOf = routeLabeler({
    restTemplate: (method, path) => {
      const m = table.match(method, path);
      return m.kind === "found" ? m.route.path : undefined;
    },
    rpcPaths: new Set(rpcRouter.handlers.map((h) => h.requestPath)),
    frontPrefixes: fronts.map((f) => f.prefix),
  });
  const connect = connectNodeAdapter({ routes, interceptors, readMaxBytes: config.maxBodyBytes, fallback: withFronts(fronts, restShim) });
  const fastPathStats = { answered: 0 };
  // The edge: request id and context, HTTP metrics and server span, GET /metrics (METRICS_TOKEN protects it).
  const edge = observedHttp(withSecurityHeaders(withCors(withBodyLimit(connect, config.maxBodyBytes), config.corsOrigins)), { metrics, routeOf, metricsToken: config.metricsToken });
  // Unpaid calls of paid SKUs get their 402 in front of the edge (same checks, bytes and metrics: challenge-fast-path.ts).
  const handler = deps.challengeFastPath === false ? edge : withChallengeFastPath(edge, { gate, table, routeOf, maxBodyBytes: config.maxBodyBytes, publicBaseUrl: config.publicBaseUrl, metrics, log, stats: fastPathStats });
  return {
    handler,
    transport,
    metrics,
    table,
    /** How many unpaid calls the challenge fast path answered. */
    fastPathStats,
    /** Reconciles payments interrupted by a crash, then starts the in-process job workers. */
    async start() {
      const r = await reconciler.reconcileAll(config.settleTimeoutMs);
      if (r.finalized || r.failed) log.info(r, "payments reconciled at start");
      await gate.retryEffects();
      // Then keeps reconciling: settlements whose outcome was lost while a dependency was away.
      reconciler.start(Math.min(Math.max(config.settleTimeoutMs / 2, 1_000), 30_000), config.settleTimeoutMs);
      await refunder.resume();
      refunder.start(Math.min(Math.max(sendLeaseMs / 4, 1_000), 60_000));
      await releaser.resume();
      await markets.recoverOrphanedEcash();
      if (chain.dev) await fundDevTreasury(ds, chain, sender(chain.faucetAccount)!, log);
      worker.start();
      webhooks.start();
      anchorer?.start(config.anchorPollMs);
      reputationEngine.start();
      alertScheduler.start();
      expiry = setInterval(() => void marketplace.expireDue().catch((err) => log.error({ err }, "request expiry failed")), 30_000);
      expiry.unref();
    },
    /** Only the job workers, for a `svc worker` process: no listener, reconciler or schedulers. */
    startWorkers() {
      worker.start();
    },
    async stop() {
      clearInterval(expiry);
      reputationEngine.stop();
      await alertScheduler.stop();
      await Promise.all([worker.stop(), webhooks.stop(), anchorer?.stop(), reconciler.stop(), refunder.stop()]);
    },
  };
}

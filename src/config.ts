import path from "node:path";
import { z } from "zod";
import { NETWORKS, type NetworkInfo } from "./chain/networks.js";
import { usdToAtomic } from "./platform/money.js";
import { LLM_MODELS_PATTERN, llmSettings, type LlmSettings } from "./llm/llm-config.js";
import { isMintList, parseMintList } from "./ecash/mint-allowlist.js";
import { resolveSecretFiles, SecretFileError, withPassword } from "./platform/secrets.js";
import { parseCorsOrigins } from "./platform/http/cors.js";

/** The ERC-8004 Identity Registry's testnet address (mainnet: 0x8004A169FB4a3325136EB29fA0ceB6D2e539a432). */
export const ERC8004_TESTNET_IDENTITY_REGISTRY = "0x8004A818BFB912233c491871b3d84c89A494BD9e";
/** Where the embedded dev chain places the SettlementBatcher contract. */
export const DEV_SETTLEMENT_BATCHER = "0xba7c000000000000000000000000000000000402";

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_KEY = /^0x[0-9a-fA-F]{64}$/;

/** Used when PROOF_HMAC_KEY is unset; the proofs then say so in their signature disclosure. */
export const DEV_PROOF_HMAC_KEY = "svc-development-proof-key-not-secret";

// Every setting comes from the environment, is validated once here, and is documented in the README.
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8402),
  HOST: z.string().min(1).default("127.0.0.1"),
  PUBLIC_BASE_URL: z.url().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^(mysql|mariadb):\/\//, "DATABASE_URL must start with mysql:// or mariadb://")
    .optional(),
  DATA_DIR: z.string().min(1).default("./data"),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  DATABASE_PASSWORD: z.string().min(1).optional(),
  CORS_ORIGINS: z.string().default("").refine((v) => parseCorsOrigins(v) !== undefined, "must be * or comma-separated origins like https://app.example.com"),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(20_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(65_000),
  CATALOG_FILE: z.string().min(1).default("config/catalog.yaml"),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CHAIN_RPC_URL: z.url().optional(),
  CHAIN_NETWORK: z.enum(["base", "base-sepolia"]).optional(),
  DEV_CHAIN_PERSIST: z.enum(["true", "false"]).default("true"),
  DEV_CHAIN_JOIN_URL: z.url().optional(),
  TREASURY_ADDRESS: z.string().regex(HEX_ADDRESS, "must be a 0x-prefixed 20-byte address").optional(),
  TREASURY_PRIVATE_KEY: z.string().regex(HEX_KEY, "must be a 0x-prefixed 32-byte hex key").optional(),
  FACILITATOR_PRIVATE_KEY: z.string().regex(HEX_KEY, "must be a 0x-prefixed 32-byte hex key").optional(),
  FACILITATOR_URL: z.url().optional(),
  FACILITATOR_AUTH_TOKEN: z.string().min(16).optional(),
  FACILITATOR_API_KEY: z.string().min(16).optional(),
  FACILITATOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  PAYMENT_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(3600).default(300),
  SETTLE_RESEND_AFTER_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  SETTLE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(90_000),
  SETTLE_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(10_000).default(20),
  SETTLE_BATCH_MAX: z.coerce.number().int().min(1).max(100).default(50), // 100 items: ~24M gas limit, under a 30M block
  SETTLE_BATCH_EAGER: z.enum(["true", "false"]).default("true"),
  SETTLEMENT_BATCHER_ADDRESS: z.string().regex(HEX_ADDRESS, "must be a 0x-prefixed 20-byte address").optional(),
  PROOF_HMAC_KEY: z.string().min(16).optional(),
  WORKER_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(2),
  STARTER_CREDIT_USD: z.string().regex(/^\d{1,6}(\.\d{1,6})?$/, "must be a USD amount").default("1.00"),
  WEBHOOK_SECRET_KEY: z.string().min(16).optional(),
  WEBHOOK_BACKOFF_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  WEBHOOK_RETRY_HOURS: z.coerce.number().min(0.001).max(720).default(24),
  SAFE_FETCH_ALLOW: z.string().default(""),
  MARKET_COINBASE_URL: z.url().default("https://api.exchange.coinbase.com"),
  MARKET_KRAKEN_URL: z.url().default("https://api.kraken.com"),
  MARKET_BINANCE_URL: z.url().default("https://api.binance.com"),
  PRICE_CACHE_SECONDS: z.coerce.number().min(0).max(300).default(5),
  MARKET_COINBASE_TAKER_FEE_BPS: z.coerce.number().min(0).max(1000).default(60),
  MARKET_KRAKEN_TAKER_FEE_BPS: z.coerce.number().min(0).max(1000).default(40),
  MARKET_BINANCE_TAKER_FEE_BPS: z.coerce.number().min(0).max(1000).default(10),
  BREAKER_FAILURE_THRESHOLD: z.coerce.number().int().min(1).max(1000).default(5),
  BREAKER_COOLDOWN_SECONDS: z.coerce.number().min(0.1).max(3600).default(30),
  PAYER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000).default(120),
  PAYER_RATE_LIMIT_BURST: z.coerce.number().int().min(1).max(100_000).default(30),
  JOB_RESULT_RETENTION_DAYS: z.coerce.number().min(0.00001).max(3650).default(30),
  SEC_WWW_URL: z.url().default("https://www.sec.gov"),
  SEC_DATA_URL: z.url().default("https://data.sec.gov"),
  SEC_EDGAR_USER_AGENT: z.string().min(3).max(200).default("svc self-hosted exchange (operator: set SEC_EDGAR_USER_AGENT)"),
  NEWS_FEEDS_FILE: z.string().min(1).default("config/news-feeds.yaml"),
  NEWS_CACHE_MINUTES: z.coerce.number().min(0).max(120).default(5),
  NEWS_FEED_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(6_000),
  NEWS_FEED_MAX_BYTES: z.coerce.number().int().min(1024).max(16 * 1024 * 1024).default(2 * 1024 * 1024),
  NEWS_FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(24),
  YOUTUBE_URL: z.url().default("https://www.youtube.com"),
  PRICE_SOURCES_FILE: z.string().min(1).default("config/price-sources.yaml"),
  ALERT_EVAL_INTERVAL_SECONDS: z.coerce.number().min(0.05).max(86_400).default(60),
  ALERT_MAX_PER_PAYER: z.coerce.number().int().min(1).max(10_000).default(20),
  ALERT_TTL_HOURS: z.coerce.number().min(0.001).max(24 * 90).default(168),
  INTERNAL_WALLETS: z.string().default(""),
  IDENTITY_REGISTRY_ADDRESS: z.string().regex(HEX_ADDRESS, "must be a 0x-prefixed 20-byte address").optional(),
  OPERATOR_API_KEY: z.string().min(16).optional(),
  METRICS_TOKEN: z.string().min(16).optional(),
  OTEL_TRACING: z.enum(["0", "1", "true", "false"]).default("0"),
  REQUEST_TTL_HOURS: z.coerce.number().min(0.0001).max(24 * 90).default(72),
  STARTER_CREDIT_CASHOUT: z.enum(["true", "false"]).optional(),
  PROOF_SIGNING_KEY_FILE: z.string().min(1).optional(),
  ANCHOR_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(256),
  ANCHOR_MAX_WAIT_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  ANCHOR_POLL_MS: z.coerce.number().int().min(10).max(3_600_000).default(2_000),
  LLM_BASE_URL: z.url().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().trim().min(1).max(200).optional(),
  LLM_MODELS: z.string().regex(LLM_MODELS_PATTERN, "must be family=model pairs separated by commas").default(""),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  LLM_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  LLM_PRICE_INPUT_PER_MTOK_USD: z.string().regex(/^\d{1,6}(\.\d{1,6})?$/, "must be a USD amount").default("0"),
  LLM_PRICE_OUTPUT_PER_MTOK_USD: z.string().regex(/^\d{1,6}(\.\d{1,6})?$/, "must be a USD amount").default("0"),
  CASHU_MINTS: z.string().default("").refine(isMintList, "must be comma-separated http(s) mint URLs (no credentials, query or fragment)"),
  CASHU_MINT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  CASHU_PROOF_KEY: z.string().min(16).optional(),
});


export type DatabaseConfig =
  | { kind: "sqlite"; file: string }
  | { kind: "mariadb" | "mysql"; url: string; poolSize: number };

export interface Config {
  port: number;
  host: string;
  /** Base URL used in absolute links (402 `resource.url`, agent card); derived from HOST/PORT when unset. */
  publicBaseUrl: string | undefined;
  database: DatabaseConfig;
  catalogFile: string;
  maxBodyBytes: number;
  shutdownGraceMs: number;
  logLevel: z.infer<typeof EnvSchema>["LOG_LEVEL"];
  /** Network payments settle on; the embedded dev chain (a Base Sepolia mirror) when CHAIN_RPC_URL is unset. */
  network: NetworkInfo;
  devChain: boolean;
  chainRpcUrl: string | undefined;
  /** Dev chain: keep anvil's state in DATA_DIR across restarts. */
  devChainStateFile: string | undefined;
  /** Dev chain: join the one another process (the first server) runs at this RPC URL instead of starting one. */
  devChainJoinUrl: string | undefined;
  treasuryAddress: `0x${string}` | undefined;
  treasuryPrivateKey: `0x${string}` | undefined;
  facilitatorPrivateKey: `0x${string}` | undefined;
  /** Remote x402 facilitator; the built-in one when unset. */
  facilitatorUrl: string | undefined;
  /** Bearer token sent to the remote facilitator. */
  facilitatorAuthToken: string | undefined;
  /** Bearer key required by this server's own /facilitator/verify and /settle; they are closed when unset. */
  facilitatorApiKey: string | undefined;
  facilitatorTimeoutMs: number;
  /** `maxTimeoutSeconds` of the challenge: how long a signed authorization may stay valid. */
  paymentTimeoutSeconds: number;
  settleResendAfterMs: number;
  settleTimeoutMs: number;
  /** Built-in facilitator: settlements arriving within this window share one batcher transaction (0 = one tx each). */
  settleBatchWindowMs: number;
  settleBatchMax: number;
  /** SETTLE_BATCH_EAGER: a settlement that finds no transaction in flight is sent at once, not after the window. */
  settleBatchEager: boolean;
  /** SettlementBatcher contract; the dev chain places one at DEV_SETTLEMENT_BATCHER; no batching on a real chain when unset. */
  settlementBatcherAddress: `0x${string}` | undefined;
  proofHmacKey: string;
  /** True when PROOF_HMAC_KEY is the built-in development key. */
  proofHmacKeyIsDev: boolean;
  workerConcurrency: number;
  /** Budget of the starter-credit note each new agent receives, atomic USDC. */
  starterCreditAtomic: bigint;
  /** Key that encrypts webhook signing secrets at rest (a development key when unset). */
  webhookSecretKey: string;
  webhookBackoffBaseMs: number;
  webhookRetryMs: number;
  /** Hosts (`host` or `host:port`) that callbacks may use even when they resolve to private addresses. */
  safeFetchAllow: string[];
  /** Base URLs of the public exchange APIs the market-data SKUs read. */
  marketVenueUrls: { coinbase: string; kraken: string; binance: string };
  /** How long a venue price read is reused. */
  priceCacheMs: number;
  /** Taker fee per venue in basis points, used by the arbitrage spreads unless the buyer states its own. */
  marketTakerFeeBps: { coinbase: number; kraken: number; binance: number };
  /** Per-upstream circuit breakers of the engines' outbound requests. */
  breaker: { threshold: number; cooldownMs: number };
  /** Per-payer token bucket of paid calls (perMinute 0 = off). */
  payerRateLimit: { perMinute: number; burst: number };
  /** How long async job results are kept after they finish. */
  jobResultRetentionMs: number;
  /** SEC EDGAR hosts and the User-Agent EDGAR requires (naming the operator). */
  edgar: { www: string; data: string; userAgent: string };
  /** The curated news feeds file and how they are read (per-feed timeout and size, cache, parallelism). */
  news: { feedsFile: string; cacheMs: number; feedTimeoutMs: number; feedMaxBytes: number; concurrency: number };
  /** Base URL of YouTube (watch pages and caption tracks) for content.youtube-research. */
  youtubeUrl: string;
  /** The chains and on-chain price sources of oracle.cross-chain-prices (YAML). */
  priceSourcesFile: string;
  /** oracle.alert-generator: how often alerts are evaluated, how many live alerts a payer may hold, how long one lives. */
  alerts: { evalIntervalMs: number; maxPerPayer: number; ttlMs: number };
  /** Extra wallets the service itself uses, refused as payout wallets. */
  internalWallets: string[];
  /** ERC-8004 Identity Registry; the dev chain places one at the testnet address. */
  identityRegistryAddress: `0x${string}`;
  /** Bearer key of the operator routes (payouts); closed when unset. */
  operatorApiKey: string | undefined;
  /** When set, GET /metrics requires `Authorization: Bearer <token>`; open otherwise. */
  metricsToken: string | undefined;
  /** OTEL_TRACING=1: register an OTLP/HTTP tracer provider (OTEL_EXPORTER_OTLP_* configure it). */
  otelTracing: boolean;
  /** How long an open marketplace request lives. */
  requestTtlSeconds: number;
  /**
   * Whether work funded by starter credit may be paid out in USDC. Starter credit is given away at
   * registration, so on a real chain this is off unless the operator turns it on (the dev chain: on).
   */
  starterCreditCashout: boolean;
  /** PEM file of the Ed25519 key that signs proof records (created on first start). */
  proofSigningKeyFile: string;
  /** A Merkle batch is anchored every this many records, or when its oldest record waited this long. */
  anchorBatchSize: number;
  anchorMaxWaitMs: number;
  anchorPollMs: number;
  /** The OpenAI-compatible language model (LLM_*); undefined when LLM_BASE_URL is unset. */
  llm: LlmSettings | undefined;
  /**
   * Cashu ecash: the mints whose tokens are accepted (normalized URLs; empty = ecash refused), the
   * timeout of each mint request, and the key sealing the secrets of held proofs (a development key when unset).
   */
  cashu: { mints: string[]; timeoutMs: number; proofKey: string; proofKeyIsDev: boolean };
  /** Origins (or `*`) allowed cross-origin calls beyond the public reads, which allow any origin. */
  corsOrigins: string[];
  /** Slow-client limits of the one port: all headers within, whole request within, idle keep-alive. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
}

export class ConfigError extends Error {}

function secretUrl(url: string, password: string): string {
  try {
    return withPassword(url, password);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  let env: NodeJS.ProcessEnv;
  try {
    env = resolveSecretFiles(rawEnv); // NAME_FILE -> NAME for secret settings
  } catch (err) {
    if (err instanceof SecretFileError) throw new ConfigError(err.message);
    throw err;
  }
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const missing: string[] = [];
  if (e.CHAIN_RPC_URL && !e.CHAIN_NETWORK) missing.push("CHAIN_NETWORK: required when CHAIN_RPC_URL is set (base or base-sepolia)");
  if (e.CHAIN_RPC_URL && !e.TREASURY_ADDRESS) missing.push("TREASURY_ADDRESS: required when CHAIN_RPC_URL is set (the payTo of every challenge)");
  if (e.CHAIN_RPC_URL && !e.FACILITATOR_URL && !e.FACILITATOR_PRIVATE_KEY) {
    missing.push("FACILITATOR_PRIVATE_KEY: required on a real chain unless FACILITATOR_URL names a remote facilitator");
  }
  if (e.LLM_BASE_URL && !e.LLM_MODEL) missing.push("LLM_MODEL: required when LLM_BASE_URL is set (the default model)");
  if (missing.length) throw new ConfigError(`invalid configuration:\n${missing.map((m) => `  ${m}`).join("\n")}`);
  const database: DatabaseConfig = e.DATABASE_URL
    ? {
        kind: e.DATABASE_URL.startsWith("mariadb:") ? "mariadb" : "mysql",
        url: e.DATABASE_PASSWORD ? secretUrl(e.DATABASE_URL, e.DATABASE_PASSWORD) : e.DATABASE_URL,
        poolSize: e.DB_POOL_SIZE,
      }
    : { kind: "sqlite", file: path.resolve(e.DATA_DIR, "svc.sqlite") };
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ""),
    database,
    catalogFile: path.resolve(e.CATALOG_FILE),
    maxBodyBytes: e.MAX_BODY_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    logLevel: e.LOG_LEVEL,
    network: NETWORKS[e.CHAIN_RPC_URL ? e.CHAIN_NETWORK! : "base-sepolia"],
    devChain: !e.CHAIN_RPC_URL,
    chainRpcUrl: e.CHAIN_RPC_URL,
    devChainStateFile: !e.CHAIN_RPC_URL && e.DEV_CHAIN_PERSIST === "true" ? path.resolve(e.DATA_DIR, "devchain-state.json") : undefined,
    devChainJoinUrl: e.CHAIN_RPC_URL ? undefined : e.DEV_CHAIN_JOIN_URL,
    treasuryAddress: e.TREASURY_ADDRESS as `0x${string}` | undefined,
    treasuryPrivateKey: e.TREASURY_PRIVATE_KEY as `0x${string}` | undefined,
    facilitatorPrivateKey: e.FACILITATOR_PRIVATE_KEY as `0x${string}` | undefined,
    facilitatorUrl: e.FACILITATOR_URL?.replace(/\/+$/, ""),
    facilitatorAuthToken: e.FACILITATOR_AUTH_TOKEN,
    facilitatorApiKey: e.FACILITATOR_API_KEY,
    facilitatorTimeoutMs: e.FACILITATOR_TIMEOUT_MS,
    paymentTimeoutSeconds: e.PAYMENT_TIMEOUT_SECONDS,
    settleResendAfterMs: e.SETTLE_RESEND_AFTER_MS,
    settleTimeoutMs: e.SETTLE_TIMEOUT_MS,
    settleBatchWindowMs: e.SETTLE_BATCH_WINDOW_MS,
    settleBatchMax: e.SETTLE_BATCH_MAX,
    settleBatchEager: e.SETTLE_BATCH_EAGER === "true",
    settlementBatcherAddress: (e.SETTLEMENT_BATCHER_ADDRESS ?? (e.CHAIN_RPC_URL ? undefined : DEV_SETTLEMENT_BATCHER)) as `0x${string}` | undefined,
    proofHmacKey: e.PROOF_HMAC_KEY ?? DEV_PROOF_HMAC_KEY,
    proofHmacKeyIsDev: !e.PROOF_HMAC_KEY,
    workerConcurrency: e.WORKER_CONCURRENCY,
    starterCreditAtomic: usdToAtomic(e.STARTER_CREDIT_USD),
    webhookSecretKey: e.WEBHOOK_SECRET_KEY ?? "svc-development-webhook-key-not-secret",
    webhookBackoffBaseMs: e.WEBHOOK_BACKOFF_BASE_MS,
    webhookRetryMs: Math.round(e.WEBHOOK_RETRY_HOURS * 3_600_000),
    safeFetchAllow: e.SAFE_FETCH_ALLOW.split(",").map((h) => h.trim()).filter(Boolean),
    marketVenueUrls: { coinbase: e.MARKET_COINBASE_URL, kraken: e.MARKET_KRAKEN_URL, binance: e.MARKET_BINANCE_URL },
    priceCacheMs: Math.round(e.PRICE_CACHE_SECONDS * 1000),
    marketTakerFeeBps: { coinbase: e.MARKET_COINBASE_TAKER_FEE_BPS, kraken: e.MARKET_KRAKEN_TAKER_FEE_BPS, binance: e.MARKET_BINANCE_TAKER_FEE_BPS },
    breaker: { threshold: e.BREAKER_FAILURE_THRESHOLD, cooldownMs: Math.round(e.BREAKER_COOLDOWN_SECONDS * 1000) },
    payerRateLimit: { perMinute: e.PAYER_RATE_LIMIT_PER_MINUTE, burst: e.PAYER_RATE_LIMIT_BURST },
    jobResultRetentionMs: Math.round(e.JOB_RESULT_RETENTION_DAYS * 86_400_000),
    edgar: { www: e.SEC_WWW_URL, data: e.SEC_DATA_URL, userAgent: e.SEC_EDGAR_USER_AGENT },
    news: { feedsFile: path.resolve(e.NEWS_FEEDS_FILE), cacheMs: Math.round(e.NEWS_CACHE_MINUTES * 60_000), feedTimeoutMs: e.NEWS_FEED_TIMEOUT_MS, feedMaxBytes: e.NEWS_FEED_MAX_BYTES, concurrency: e.NEWS_FETCH_CONCURRENCY },
    youtubeUrl: e.YOUTUBE_URL.replace(/\/+$/, ""),
    priceSourcesFile: path.resolve(e.PRICE_SOURCES_FILE),
    alerts: { evalIntervalMs: Math.round(e.ALERT_EVAL_INTERVAL_SECONDS * 1000), maxPerPayer: e.ALERT_MAX_PER_PAYER, ttlMs: Math.round(e.ALERT_TTL_HOURS * 3_600_000) },
    internalWallets: e.INTERNAL_WALLETS.split(",").map((h) => h.trim()).filter(Boolean),
    identityRegistryAddress: (e.IDENTITY_REGISTRY_ADDRESS ?? ERC8004_TESTNET_IDENTITY_REGISTRY) as `0x${string}`,
    operatorApiKey: e.OPERATOR_API_KEY,
    metricsToken: e.METRICS_TOKEN,
    otelTracing: e.OTEL_TRACING === "1" || e.OTEL_TRACING === "true",
    requestTtlSeconds: Math.round(e.REQUEST_TTL_HOURS * 3600),
    starterCreditCashout: e.STARTER_CREDIT_CASHOUT ? e.STARTER_CREDIT_CASHOUT === "true" : !e.CHAIN_RPC_URL,
    proofSigningKeyFile: path.resolve(e.PROOF_SIGNING_KEY_FILE ?? path.join(e.DATA_DIR, "proof-ed25519.pem")),
    anchorBatchSize: e.ANCHOR_BATCH_SIZE,
    anchorMaxWaitMs: Math.round(e.ANCHOR_MAX_WAIT_SECONDS * 1000),
    anchorPollMs: e.ANCHOR_POLL_MS,
    llm: llmSettings(e),
    cashu: { mints: parseMintList(e.CASHU_MINTS), timeoutMs: e.CASHU_MINT_TIMEOUT_MS, proofKey: e.CASHU_PROOF_KEY ?? "svc-development-ecash-key-not-secret", proofKeyIsDev: !e.CASHU_PROOF_KEY },
    corsOrigins: parseCorsOrigins(e.CORS_ORIGINS)!,
    http: { headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS, requestTimeoutMs: Math.max(e.HTTP_REQUEST_TIMEOUT_MS, e.HTTP_HEADERS_TIMEOUT_MS), keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS },
  };
}

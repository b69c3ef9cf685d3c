import path from "node:path";
import { z } from "zod";
import { NETWORKS, type NetworkInfo } from "./chain/networks.js";

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
  CATALOG_FILE: z.string().min(1).default("config/catalog.yaml"),
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CHAIN_RPC_URL: z.url().optional(),
  CHAIN_NETWORK: z.enum(["base", "base-sepolia"]).optional(),
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
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.CHAIN_RPC_URL && !e.CHAIN_NETWORK) {
    throw new ConfigError("invalid configuration:\n  CHAIN_NETWORK: required when CHAIN_RPC_URL is set (base or base-sepolia)");
  }
  const database: DatabaseConfig = e.DATABASE_URL
    ? {
        kind: e.DATABASE_URL.startsWith("mariadb:") ? "mariadb" : "mysql",
        url: e.DATABASE_URL,
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
  };
}

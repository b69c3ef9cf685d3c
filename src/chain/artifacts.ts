import { createRequire } from "node:module";
import type { Abi } from "viem";
import type { Artifact } from "./contract-compiler.js";

// Compiled contracts (committed; regenerate with `npm run build:contracts`).
const require = createRequire(import.meta.url);
export const DEV_USDC = require("./artifacts/DevUsdc.json") as Artifact & { abi: Abi };
export const MULTICALL3 = require("./artifacts/Multicall3.json") as Artifact & { abi: Abi };
export const IDENTITY_REGISTRY = require("./artifacts/IdentityRegistry.json") as Artifact & { abi: Abi };

/** Standard Multicall3 address on every EVM chain. */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11" as const;
export const SETTLEMENT_BATCHER = require("./artifacts/SettlementBatcher.json") as Artifact & { abi: Abi };

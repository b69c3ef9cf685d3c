import type { MigrationInterface } from "typeorm";
import { Payments1795300000000 } from "./1795300000000-payments.js";
import { Registry1795310000000 } from "./1795310000000-registry.js";
import { Marketplace1795320000000 } from "./1795320000000-marketplace.js";
import { ProofRail1795330000000 } from "./1795330000000-proof-rail.js";
import { WitnessReputation1795340000000 } from "./1795340000000-witness-reputation.js";
import { Disputes1795350000000 } from "./1795350000000-disputes.js";
import { PriceAlerts1795360000000 } from "./1795360000000-price-alerts.js";
import { Introductions1795370000000 } from "./1795370000000-introductions.js";
import { JobPolicyManifest1795380000000 } from "./1795380000000-job-policy-manifest.js";
import { LlmUsage1795400000000 } from "./1795400000000-llm-usage.js";
import { Markets1795440000000 } from "./1795440000000-markets.js";
import { Ecash1795450000000 } from "./1795450000000-ecash.js";
import { A2aTasks1795460000000 } from "./1795460000000-a2a-tasks.js";
import { JobPriority1795470000000 } from "./1795470000000-job-priority.js";
import { ClusterState1795480000000 } from "./1795480000000-cluster-state.js";
import { SettlementBatches1795490000000 } from "./1795490000000-settlement-batches.js";
import { RequestIds1795500000000 } from "./1795500000000-request-ids.js";
import { PaymentEffects1795510000000 } from "./1795510000000-payment-effects.js";
import { SendLeases1795530000000 } from "./1795530000000-send-leases.js";

// Migrations in order. Files are named `{timestamp}-{kebab-name}.ts` and run on SQLite and MySQL/MariaDB.
export const MIGRATIONS: (new () => MigrationInterface)[] = [Payments1795300000000, Registry1795310000000, Marketplace1795320000000, ProofRail1795330000000, WitnessReputation1795340000000, Disputes1795350000000, PriceAlerts1795360000000, Introductions1795370000000, JobPolicyManifest1795380000000, LlmUsage1795400000000, Markets1795440000000, Ecash1795450000000, A2aTasks1795460000000, JobPriority1795470000000, ClusterState1795480000000, SettlementBatches1795490000000, RequestIds1795500000000, PaymentEffects1795510000000, SendLeases1795530000000];

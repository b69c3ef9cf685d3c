import { DataSource } from "typeorm";
import type { JsonObject } from "@bufbuild/protobuf";
import { loadCatalog } from "../src/catalog/catalog-config.js";
import { PolicyGates } from "../src/policy/policy-gates.js";
import { CircuitBreakers } from "../src/policy/circuit-breakers.js";
import { PayerRateLimiter } from "../src/policy/payer-rate-limit.js";
import { parseInput, runEngine, type SkuContext } from "../src/skus/sku-handler.js";
import { skuHandlers } from "../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../src/skus/subject.js";

// npm run bench:runtime: what the SKU runtime adds around an engine on every paid call (input schema,
// content-trap scan, jurisdiction and breaker gates, payer rate limit, output-schema check, policy
// manifest), against the bare engine measured in the same run. Engine: finops.token-spend-audit on
// usage records of growing size (pure computation, no I/O). Figures are printed, never asserted.

const sku = loadCatalog("config/catalog.yaml").find((s) => s.skuId === "finops.token-spend-audit")!;
const handler = skuHandlers(NO_AGENTS).get(sku.skuId)!;
const gates = new PolicyGates(new CircuitBreakers({ threshold: 5, cooldownMs: 30_000 }), new PayerRateLimiter({ perMinute: 0, burst: 1 }));
const ctx = { manager: new DataSource({ type: "better-sqlite3", database: ":memory:" }).manager, payer: "0x0000000000000000000000000000000000000001", paymentId: "bench", now: new Date("2026-11-22T00:00:00Z"), proofKey: undefined as never } satisfies SkuContext;

function body(records: number): JsonObject {
  return {
    budget: { total: "500" },
    allowed_scopes: ["support", "search"],
    records: Array.from({ length: records }, (_, i) => ({
      id: `r${i}`,
      model: i % 3 ? "gpt-4o-mini" : "claude-haiku",
      tokens_in: 1_000 + (i % 97) * 13,
      tokens_out: 200 + (i % 31) * 7,
      cost: `0.00${(i % 9) + 1}25`,
      timestamp: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
      scope: i % 11 ? "support" : "search",
    })),
  };
}

async function perSecond(ms: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await fn(); // warm-up
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    await fn();
    n++;
  }
  return (n * 1000) / ms;
}

console.log("SKU runtime overhead (finops.token-spend-audit, pure computation)");
console.log("records   bare engine/s   with runtime/s   runtime cost per call   ratio");
for (const size of [10, 100, 1_000]) {
  const raw = body(size);
  const parsed = parseInput(handler, raw);
  const bare = await perSecond(1_500, () => handler.run(parsed, ctx));
  const full = await perSecond(1_500, async () => {
    const input = parseInput(handler, raw);
    const decision = gates.beforeChallenge(sku, handler, raw, input, "US");
    gates.forPayer(ctx.payer);
    gates.manifest(sku, decision);
    return runEngine(handler, input, ctx);
  });
  const extraUs = (1e6 / full - 1e6 / bare).toFixed(0);
  console.log(`${String(size).padStart(7)}   ${bare.toFixed(0).padStart(13)}   ${full.toFixed(0).padStart(14)}   ${extraUs.padStart(18)} µs   ${(bare / full).toFixed(2)}x`);
}

import fs from "node:fs";
import { parse } from "yaml";
import { z } from "zod";
import { usdToAtomic } from "../platform/money.js";

// Loads the operator's catalog file (prices are configuration, not code) and checks it once at start.

const SKU_ID = /^[a-z][a-z0-9-]*\.[a-z][a-z0-9_-]*$/;

const SkuEntry = z
  .object({
    id: z.string().regex(SKU_ID, "sku id must be <family>.<name>"),
    name: z.string().min(1),
    purpose: z.string().min(1),
    price_usd: z.string().optional(),
    mode: z.enum(["sync", "async"]),
    retired: z.boolean().default(false),
    onboarding_required: z.boolean().default(false),
  })
  .strict()
  .refine((s) => s.retired || s.price_usd !== undefined, { message: "price_usd is required unless retired" })
  .refine((s) => !s.retired || s.price_usd === undefined, { message: "a retired SKU has no price" });

const CatalogFile = z.object({ skus: z.array(SkuEntry).min(1) }).strict();

export interface SkuDefinition {
  skuId: string;
  family: string;
  name: string;
  purpose: string;
  /** List price in atomic USDC units; undefined for a retired SKU. */
  priceAtomic: bigint | undefined;
  mode: "sync" | "async";
  retired: boolean;
  onboardingRequired: boolean;
}

export class CatalogConfigError extends Error {}

export function parseCatalog(text: string, source = "catalog"): SkuDefinition[] {
  const parsed = CatalogFile.safeParse(parse(text));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new CatalogConfigError(`${source} is invalid:\n${lines.join("\n")}`);
  }
  const seen = new Set<string>();
  return parsed.data.skus.map((s) => {
    if (seen.has(s.id)) throw new CatalogConfigError(`${source}: duplicate sku id ${s.id}`);
    seen.add(s.id);
    let priceAtomic: bigint | undefined;
    try {
      priceAtomic = s.price_usd === undefined ? undefined : usdToAtomic(s.price_usd);
    } catch (err) {
      throw new CatalogConfigError(`${source}: ${s.id}: ${(err as Error).message}`);
    }
    if (priceAtomic === 0n) throw new CatalogConfigError(`${source}: ${s.id}: a priced SKU must cost more than 0`);
    return {
      skuId: s.id,
      family: s.id.split(".")[0]!,
      name: s.name,
      purpose: s.purpose,
      priceAtomic,
      mode: s.mode,
      retired: s.retired,
      onboardingRequired: s.onboarding_required,
    };
  });
}

export function loadCatalog(file: string): SkuDefinition[] {
  return parseCatalog(fs.readFileSync(file, "utf8"), file);
}

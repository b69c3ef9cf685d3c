import fs from "node:fs";
import { isAddress, type Address } from "viem";
import { parse } from "yaml";
import { z } from "zod";

// The operator's list of chains and on-chain price sources (config/price-sources.yaml by default,
// PRICE_SOURCES_FILE to use another), validated once at start. A source is a Chainlink-style
// aggregator (AggregatorV3Interface) or a DEX pool (Uniswap v2 pair reserves, Uniswap v3 slot0)
// whose `base_token` is the pair's base asset; the pool's other token stands for the quote asset.

export const PAIR = /^([A-Z0-9]{2,10})[-/]([A-Z0-9]{2,10})$/;

const ChecksummedAddress = z
  .string()
  .refine((a) => isAddress(a), "must be a 0x-prefixed 20-byte address with a valid checksum (or all lowercase)")
  .transform((a) => a as Address);

const ChainName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "lowercase letters, digits and dashes");

const Chain = z
  .object({
    name: ChainName,
    chain_id: z.number().int().positive(),
    rpc_url: z.url({ protocol: /^https?$/ }),
    /** Per-chain deadline of each RPC request. */
    timeout_ms: z.number().int().min(100).max(60_000).default(5_000),
  })
  .strict();

const common = { chain: ChainName, address: ChecksummedAddress, note: z.string().max(200).optional() };
const Source = z.discriminatedUnion("kind", [
  z
    .object({
      ...common,
      kind: z.literal("chainlink"),
      /** A round whose updatedAt is older than this is stale (the feed's heartbeat plus a margin). */
      max_age_seconds: z.number().int().positive().max(30 * 86_400).default(3_600),
    })
    .strict(),
  z.object({ ...common, kind: z.literal("uniswap-v2"), base_token: ChecksummedAddress }).strict(),
  z.object({ ...common, kind: z.literal("uniswap-v3"), base_token: ChecksummedAddress }).strict(),
]);

const PriceSourcesFile = z
  .object({
    chains: z.array(Chain).min(1),
    pairs: z.record(z.string(), z.array(Source).min(1)),
  })
  .strict()
  .superRefine((f, ctx) => {
    const names = new Set<string>();
    f.chains.forEach((c, i) => {
      if (names.has(c.name)) ctx.addIssue({ code: "custom", path: ["chains", i, "name"], message: `chain ${c.name} is listed twice` });
      names.add(c.name);
    });
    for (const [pair, sources] of Object.entries(f.pairs)) {
      if (!PAIR.test(pairKey(pair))) ctx.addIssue({ code: "custom", path: ["pairs", pair], message: "pair keys look like ETH-USD" });
      sources.forEach((s, i) => {
        if (!names.has(s.chain)) ctx.addIssue({ code: "custom", path: ["pairs", pair, i, "chain"], message: `no chain named ${s.chain} in chains` });
      });
    }
  });

export type PriceSourcesConfig = z.infer<typeof PriceSourcesFile>;
export type ChainConfig = PriceSourcesConfig["chains"][number];
export type PriceSource = PriceSourcesConfig["pairs"][string][number];

export class PriceSourcesError extends Error {}

/** `ETH/usd` -> `ETH-USD`. */
export const pairKey = (pair: string) => pair.trim().toUpperCase().replace("/", "-");

export function parsePriceSources(text: string, origin = "price sources"): PriceSourcesConfig {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    throw new PriceSourcesError(`${origin}: not YAML: ${(err as Error).message}`);
  }
  const parsed = PriceSourcesFile.safeParse(raw);
  if (!parsed.success) {
    throw new PriceSourcesError(`${origin}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ")}`);
  }
  // Pair keys are matched in their canonical form (ETH-USD).
  const pairs = Object.fromEntries(Object.entries(parsed.data.pairs).map(([k, v]) => [pairKey(k), v]));
  return { ...parsed.data, pairs };
}

export function loadPriceSources(file: string): PriceSourcesConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new PriceSourcesError(`cannot read the price sources file ${file}: ${(err as Error).message}`);
  }
  return parsePriceSources(text, file);
}

import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type CatalogService,
  GetHealthResponseSchema,
  HealthStatus,
  ListServicesResponseSchema,
  DependencyCheckSchema,
  type ChainInfo,
  type ListServicesResponse,
} from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { KitSchema, type Kit } from "../../gen/svc/catalog/v1/catalog_pb.js";
import type { NetworkInfo } from "../chain/networks.js";
import type { GetRulesResponse } from "../../gen/svc/rules/v1/rules_service_pb.js";
import type { ReadinessCheck } from "../platform/db/readiness.js";
import type { SkuDefinition } from "./catalog-config.js";
import type { SkuSchemas } from "../skus/sku-schemas.js";
import { toSkuProto } from "./catalog.mapper.js";
import { disputeDisclosure } from "./dispute-disclosure.js";
import { EXCLUDED_JURISDICTIONS, SERVED_JURISDICTIONS } from "./jurisdictions.js";
import { KIT_CHECK_PATH, KIT_REFRESH_PATH, KIT_VERSION, KIT_VERSION_HEADER, MIN_KIT_VERSION } from "./kit.js";
import { renderSkillGuide } from "./skill-guide.js";

export interface CatalogDeps {
  skus: readonly SkuDefinition[];
  network: NetworkInfo;
  /** Whether a real engine for the SKU runs on this deployment. */
  isAvailable: (skuId: string) => boolean;
  /** The input and output JSON Schemas of the SKUs with an engine here. */
  schemas: ReadonlyMap<string, SkuSchemas>;
  rules: () => GetRulesResponse;
  /** Readiness checks of the dependencies (database, later chain and facilitator). */
  readiness: () => Promise<ReadinessCheck[]>;
  chainInfo: () => ChainInfo | undefined;
  databaseDialect: string;
  version: string;
  startedAt: number;
}

export function kitBlock(): Kit {
  return create(KitSchema, {
    kitVersion: KIT_VERSION,
    minKitVersion: MIN_KIT_VERSION,
    versionHeader: KIT_VERSION_HEADER,
    refreshUrl: KIT_REFRESH_PATH,
    checkUrl: KIT_CHECK_PATH,
  });
}

export class CatalogServiceImpl implements ServiceImpl<typeof CatalogService> {
  private catalog: ListServicesResponse | undefined;

  constructor(private readonly deps: CatalogDeps) {}

  /**
   * The catalog is fixed for the life of the process (the SKUs, the network, which engines run here and their
   * schemas are all set at start), so it is built once instead of converting every SKU's JSON Schemas to
   * protobuf Structs on each read. Callers only read the returned message.
   */
  listServices(): ListServicesResponse {
    return (this.catalog ??= this.buildCatalog());
  }

  private buildCatalog(): ListServicesResponse {
    const { skus, network, isAvailable, schemas } = this.deps;
    const services = skus.map((s) => toSkuProto(s, network, isAvailable(s.skuId), schemas.get(s.skuId)));
    return create(ListServicesResponseSchema, {
      services,
      kit: kitBlock(),
      disputeDisclosure: disputeDisclosure(),
      count: services.length,
      pricingNote: "The 402 challenge is authoritative for every price; read the amount from it and never hard-code it.",
      jurisdictions: [...SERVED_JURISDICTIONS],
      excludedJurisdictions: [...EXCLUDED_JURISDICTIONS],
    });
  }

  getSkillGuide() {
    return { markdown: renderSkillGuide(this.listServices(), this.deps.rules()) };
  }

  async getHealth() {
    const checks = (await this.deps.readiness()).map((c) => create(DependencyCheckSchema, c));
    return create(GetHealthResponseSchema, {
      status: checks.every((c) => c.ready) ? HealthStatus.OK : HealthStatus.DEGRADED,
      version: this.deps.version,
      uptimeSeconds: BigInt(Math.floor((Date.now() - this.deps.startedAt) / 1000)),
      time: timestampNow(),
      checks,
      database: this.deps.databaseDialect,
      chain: this.deps.chainInfo(),
    });
  }
}

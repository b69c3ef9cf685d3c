import { expect } from "chai";
import { CatalogConfigError, loadCatalog, parseCatalog } from "../../../src/catalog/catalog-config.js";
import { describeSku } from "../../../src/catalog/catalog.mapper.js";

const sku = (extra: string) => `skus:\n  - { id: a.b, name: N, purpose: P, mode: sync${extra} }\n`;

describe("catalog configuration", () => {
  it("loads the shipped catalog: 39 SKUs, one retired, async judgment SKUs", () => {
    const skus = loadCatalog("config/catalog.yaml");
    expect(skus).to.have.length(39);
    expect(skus.filter((s) => s.retired).map((s) => s.skuId)).to.deep.equal(["prediction.service"]);
    expect(skus.find((s) => s.skuId === "agent.prehire-check")!.mode).to.equal("async");
    expect(skus.find((s) => s.skuId === "procurement.vendor-vetting")!.priceAtomic).to.equal(99_000_000n);
  });

  it("refuses a priced SKU without price, a retired SKU with one, a zero price and a bad id", () => {
    expect(() => parseCatalog(sku(""))).to.throw(CatalogConfigError, /price_usd is required/);
    expect(() => parseCatalog(sku(', retired: true, price_usd: "1"'))).to.throw(CatalogConfigError, /retired SKU has no price/);
    expect(() => parseCatalog(sku(', price_usd: "0"'))).to.throw(CatalogConfigError, /more than 0/);
    expect(() => parseCatalog(sku(', price_usd: "0.0000001"'))).to.throw(CatalogConfigError, /6 decimals/);
    expect(() => parseCatalog(`skus:\n  - { id: NoDot, name: N, purpose: P, mode: sync, price_usd: "1" }\n`)).to.throw(CatalogConfigError, /family/);
  });

  it("refuses duplicate ids and unknown keys", () => {
    const twice = `skus:\n  - { id: a.b, name: N, purpose: P, mode: sync, price_usd: "1" }\n  - { id: a.b, name: M, purpose: P, mode: sync, price_usd: "2" }\n`;
    expect(() => parseCatalog(twice)).to.throw(CatalogConfigError, /duplicate/);
    expect(() => parseCatalog(sku(', price_usd: "1", prise: 2'))).to.throw(CatalogConfigError);
  });

  it("writes the price and the challenge rule into each description", () => {
    const [def] = parseCatalog(sku(', price_usd: "0.25"'));
    expect(describeSku(def!)).to.equal("P. List price 0.25 USD per call, paid in USDC with x402; the amount to pay is read from the 402 challenge (payment-required header), never hard-coded.");
  });
});

import { expect } from "chai";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { SkuHandler } from "../../src/skus/sku-handler.js";
import { skuHandlers } from "../../src/skus/sku-handlers.js";
import { NO_AGENTS } from "../../src/skus/subject.js";
import { startTestServer, type TestServer } from "../fixtures/test-server.js";
import { newBuyer, usdcBalance } from "../fixtures/buyer.js";

type Json = Record<string, any>;

describe("SKU schemas: published input and output JSON Schemas, and deliverables held to them", function () {
  this.timeout(60_000);
  let srv: TestServer;

  before(async () => {
    // The real engines, except a trust badge whose engine returns a deliverable outside its own schema.
    const handlers = new Map(skuHandlers(NO_AGENTS));
    const badge = handlers.get("agent.trust-badge")!;
    const drifting: SkuHandler<any> = { ...badge, run: async (input, ctx) => ({ ...(await badge.run(input, ctx)), badge: "platinum" }) };
    handlers.set("agent.trust-badge", drifting);
    srv = await startTestServer({}, { handlers });
  });
  after(() => srv.close());

  it("every SKU sold here publishes x-input-schema and x-output-schema in the catalog; the rest publish none", async () => {
    const catalog = (await (await fetch(`${srv.url}/v1/services`)).json()) as Json;
    const available = (catalog.services as Json[]).filter((s) => s.available);
    expect(available.length).to.be.greaterThan(3);
    for (const s of available) {
      expect(s["x-input-schema"], s.sku_id).to.include({ type: "object" });
      expect(s["x-output-schema"], s.sku_id).to.include({ type: "object" });
      expect(s["x-output-schema"].properties, s.sku_id).to.be.an("object");
    }
    const seal = (catalog.services as Json[]).find((s) => s.sku_id === "attestation.single-use-seal")!;
    expect(seal["x-output-schema"].required).to.include.members(["seal_id", "content_sha256", "signature"]);
    const unsold = (catalog.services as Json[]).find((s) => s.sku_id === "translation.zh-en")!;
    expect(unsold.available).to.equal(false);
    expect(unsold).not.to.have.property("x-input-schema");
  });

  it("the OpenAPI document has a path per SKU whose body and deliverable reference the same schemas", async () => {
    const doc = (await (await fetch(`${srv.url}/v1/openapi.json`)).json()) as Json;
    const op = doc.paths["/v1/services/reputation.lookup"].post;
    expect(op.requestBody.content["application/json"].schema.$ref).to.equal("#/components/schemas/sku.reputation.lookup.input");
    const input = doc.components.schemas["sku.reputation.lookup.input"];
    expect(input.required).to.deep.equal(["task"]);
    const ok = op.responses["200"].content["application/json"].schema.allOf;
    expect(ok[1].properties.deliverable.$ref).to.equal("#/components/schemas/sku.reputation.lookup.output");
    expect(doc.components.schemas["sku.reputation.lookup.output"].properties).to.have.property("badge");
    expect(op.responses).to.have.property("402");
    expect(doc.paths).to.have.property("/v1/services/{sku_id}");
  });

  it("a deliverable outside the engine's published schema fails the call with 503 service_failed and nothing is charged", async () => {
    const buyer = await newBuyer(srv);
    const paying = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const before = await usdcBalance(srv, buyer.address);
    const res = await paying(`${srv.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: buyer.address }) });
    expect(res.status).to.equal(503);
    expect(((await res.json()) as Json).error.code).to.equal("service_failed");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });
});

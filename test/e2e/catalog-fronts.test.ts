import { expect } from "chai";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { CatalogService, type ListServicesResponse } from "../../gen/svc/catalog/v1/catalog_service_pb.js";
import { ExecutionMode } from "../../gen/svc/catalog/v1/catalog_pb.js";
import { atomicToUsdNumber } from "../../src/platform/money.js";
import { startTestServer, type TestServer } from "../fixtures/test-server.js";
import { SPEC_PRICES } from "../fixtures/spec-catalog.js";

type Row = { sku: string; usd: number | null; mode: string; network: string };

function rowsFromProto(res: ListServicesResponse): Row[] {
  return res.services.map((s) => ({
    sku: s.skuId,
    usd: s.priceAmount === undefined ? null : atomicToUsdNumber(s.priceAmount),
    mode: s.mode === ExecutionMode.SYNC ? "sync" : "async",
    network: s.payment!.network,
  }));
}

describe("catalog over every front (gRPC h2c, gRPC-Web, Connect JSON, REST)", () => {
  let srv: TestServer;
  let h2: Http2SessionManager;

  before(async () => {
    srv = await startTestServer();
    h2 = new Http2SessionManager(srv.url);
  });
  after(async () => {
    h2.abort();
    await srv.close();
  });

  it("serves the same catalog to a generated gRPC client over cleartext HTTP/2, Connect JSON over HTTP/1.1, gRPC-Web and REST", async () => {
    const grpc = createClient(CatalogService, createGrpcTransport({ baseUrl: srv.url, sessionManager: h2 }));
    const connect = createClient(CatalogService, createConnectTransport({ baseUrl: srv.url, httpVersion: "1.1", useBinaryFormat: false }));
    const grpcWeb = createClient(CatalogService, createGrpcWebTransport({ baseUrl: srv.url, httpVersion: "1.1" }));
    const [viaGrpc, viaConnect, viaGrpcWeb] = await Promise.all([grpc.listServices({}), connect.listServices({}), grpcWeb.listServices({})]);
    const rest = await fetch(`${srv.url}/v1/services`);
    expect(rest.status).to.equal(200);
    const body = (await rest.json()) as { services: Record<string, unknown>[] };
    const viaRest: Row[] = body.services.map((s) => ({
      sku: s.sku_id as string,
      usd: (s["x-price-usd"] as number | undefined) ?? null,
      mode: s.mode as string,
      network: (s["x-payment"] as { network: string }).network,
    }));
    expect(rowsFromProto(viaGrpc)).to.have.length(39);
    expect(rowsFromProto(viaConnect)).to.deep.equal(rowsFromProto(viaGrpc));
    expect(rowsFromProto(viaGrpcWeb)).to.deep.equal(rowsFromProto(viaGrpc));
    expect(viaRest).to.deep.equal(rowsFromProto(viaGrpc));
  });

  it("lists exactly the spec's 39 SKUs at the spec's list prices, the retired one without a price", async () => {
    const body = (await (await fetch(`${srv.url}/v1/services`)).json()) as { services: Record<string, unknown>[]; count: number };
    expect(body.count).to.equal(39);
    const prices = Object.fromEntries(body.services.map((s) => [s.sku_id, (s["x-price-usd"] as number | undefined) ?? null]));
    expect(prices).to.deep.equal(SPEC_PRICES);
    const retired = body.services.find((s) => s.sku_id === "prediction.service")!;
    expect(retired).to.not.have.property("x-price-usd");
    expect(retired.retired).to.equal(true);
  });

  it("describes each priced SKU with its price and says the amount is read from the challenge", async () => {
    const body = (await (await fetch(`${srv.url}/v1/services`)).json()) as { services: Record<string, unknown>[] };
    for (const s of body.services) {
      expect(s.summary, String(s.sku_id)).to.equal(s.name);
      expect(s["x-payment"]).to.deep.equal({ protocol: "x402", network: "eip155:84532", asset: "USDC", scheme: "exact", asset_address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" });
      if (s.retired) continue;
      expect(s.description).to.contain(`${s["x-price-usd"]} USD`);
      expect(s.description).to.contain("read from the 402 challenge");
    }
  });

  it("carries the kit and dispute_disclosure blocks", async () => {
    const body = (await (await fetch(`${srv.url}/v1/services`)).json()) as Record<string, Record<string, unknown>>;
    expect(body.kit).to.include({ kit_version: "2026.09.07", min_kit_version: "2026.09.03", version_header: "x-kit-version" });
    expect(body.dispute_disclosure).to.include({ adjudicator: "operator_panel", unilateral_verdict: true, buyer_contest_channel: false, proof_kind: 30129 });
    expect(body.dispute_disclosure!.verdicts).to.deep.equal(["upheld", "overturned", "withdrawn"]);
  });

  // In catalog order. No language model is configured here: the SKUs that need one (panels, vetting,
  // translation) are not sold.
  it("marks available exactly the SKUs whose engine runs here; the others are not sold", async () => {
    const res = await createClient(CatalogService, createConnectTransport({ baseUrl: srv.url, httpVersion: "1.1" })).listServices({});
    expect(res.services.filter((s) => s.available).map((s) => s.skuId)).to.deep.equal([
      "agent.prehire-check",
      "agent.trust-badge",
      "arbitration.dispute-settlement",
      "attestation.single-use-seal",
      "content.youtube-research",
      "crypto.investment-plays",
      "crypto.market-analyzer",
      "data.business-registry",
      "data.sec-edgar-filing",
      "data.web-extract",
      "finops.token-spend-audit",
      "ops.due-diligence-scan",
      "ops.link-integrity",
      "oracle.alert-generator",
      "oracle.comprehensive-report",
      "oracle.cross-chain-prices",
      "oracle.historical-analysis",
      "oracle.market-arbitrage",
      "oracle.price-feed",
      "oracle.sentiment-analysis",
      "oracle.volatility-monitor",
      "procurement.trust-layer",
      "reputation.lookup",
      "research.topic-deep-researcher",
      "research.topic-news-scanner",
      "research.topic-sentiment-analyzer",
      "security.audit-attestation",
      "security.card-verify",
      "security.enterprise-audit",
      "security.injection-resilience",
      "security.multi-agent-audit",
      "security.conformance-check",
      "security.process-attestation",
      "social.verified_introduction",
    ]);
  });
});

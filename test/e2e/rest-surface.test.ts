import { expect } from "chai";
import { startTestServer, type TestServer } from "../fixtures/test-server.js";

type ErrorBody = { error: { code: string; message: string } };

describe("REST shim surface", () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ MAX_BODY_BYTES: "4096" });
  });
  after(() => srv.close());

  const get = (path: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, init);
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${srv.url}${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });

  for (const path of ["/v1/agents/someone", "/a2a/agents/someone", "/a2a/trust/someone", "/v1/reputation/someone"]) {
    it(`answers 404 with a JSON error on ${path} (a route the spec says does not exist)`, async () => {
      const res = await get(path);
      expect(res.status).to.equal(404);
      expect(res.headers.get("content-type")).to.match(/^application\/json/);
      expect(((await res.json()) as ErrorBody).error.code).to.equal("route_not_found");
    });
  }

  it("answers an unknown path with a JSON 404", async () => {
    const res = await get("/nope/at/all");
    expect(res.status).to.equal(404);
    expect(await res.json()).to.have.nested.property("error.code", "route_not_found");
  });

  it("answers GET /a2a/requests with 405 and Allow: POST", async () => {
    const res = await get("/a2a/requests");
    expect(res.status).to.equal(405);
    expect(res.headers.get("allow")).to.equal("POST");
    expect(await res.json()).to.have.nested.property("error.code", "method_not_allowed");
  });

  it("answers a POST-only path with 405 on GET and a GET-only path with 405 on POST", async () => {
    expect((await get("/v1/services/oracle.price-feed")).status).to.equal(405);
    const res = await post("/v1/services", "{}");
    expect(res.status).to.equal(405);
    expect(res.headers.get("allow")).to.equal("GET");
  });

  it("refuses malformed JSON with 400 invalid_json, never 500", async () => {
    const res = await post("/v1/agents/register", "{not json");
    expect(res.status).to.equal(400);
    expect(await res.json()).to.have.nested.property("error.code", "invalid_json");
  });

  it("refuses a body that is not a JSON object, and fields of the wrong type, with 400", async () => {
    const notObject = await post("/v1/agents/register", "[1,2]");
    expect(notObject.status).to.equal(400);
    const wrongType = await post("/v1/agents/register", JSON.stringify({ name: 42, capabilities: "x" }));
    expect(wrongType.status).to.equal(400);
    const body = (await wrongType.json()) as ErrorBody;
    expect(body.error.code).to.equal("invalid_argument");
    expect(body.error.message).to.match(/name|capabilities/);
  });

  it("refuses a USD amount with more than 6 decimals with 400", async () => {
    const res = await post("/v1/dev/faucet", JSON.stringify({ address: "0x0000000000000000000000000000000000000001", amount_usd: 0.0000001 }));
    expect(res.status).to.equal(400);
    expect(((await res.json()) as ErrorBody).error.message).to.contain("amount_usd");
  });

  it("refuses an oversized body with 413 (declared and streamed)", async () => {
    const big = JSON.stringify({ name: "x".repeat(8000) });
    const res = await post("/v1/agents/register", big);
    expect(res.status).to.equal(413);
    expect(await res.json()).to.have.nested.property("error.code", "body_too_large");
    const chunked = await fetch(`${srv.url}/v1/agents/register`, {
      method: "POST",
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).to.equal(413);
  });

  it("refuses an oversized Connect request with resource_exhausted and HTTP 413 (not Connect's retryable 429), never 500", async () => {
    const res = await post("/svc.registry.v1.RegistryService/RegisterAgent", JSON.stringify({ name: "x".repeat(8000) }));
    expect(res.status).to.equal(413);
    expect(await res.json()).to.have.property("code", "resource_exhausted");
  });

  it("refuses a SKU whose engine is not written yet with 409 service_unavailable, before any challenge", async () => {
    const res = await post("/v1/services/translation.zh-en", JSON.stringify({ task: "BTC-USD" }));
    expect(res.status).to.equal(409);
    expect(res.headers.get("payment-required")).to.equal(null);
    expect(await res.json()).to.have.nested.property("error.code", "service_unavailable");
  });

  it("refuses an outdated kit with 409 kit_outdated naming the minimum and where to refresh", async () => {
    const res = await post("/v1/services/translation.zh-en", "{}", { "x-kit-version": "2026.09.01" });
    expect(res.status).to.equal(409);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).to.equal("kit_outdated");
    expect(body.error.message).to.contain("2026.09.03").and.to.contain("/v1/skill.md");
  });

  it("refuses a malformed kit version with 400 and lets a current kit through", async () => {
    expect((await post("/v1/services/translation.zh-en", "{}", { "x-kit-version": "latest" })).status).to.equal(400);
    const current = await post("/v1/services/translation.zh-en", "{}", { "x-kit-version": "2026.09.07" });
    expect(await current.json()).to.have.nested.property("error.code", "service_unavailable");
  });

  it("keeps discovery open to an outdated kit so it can refresh", async () => {
    for (const path of ["/v1/services", "/v1/skill.md", "/v1/rules", "/v1/health"]) {
      expect((await get(path, { headers: { "x-kit-version": "2020.01.01" } })).status, path).to.equal(200);
    }
  });

  it("serves the integration guide as markdown generated from the catalog", async () => {
    const res = await get("/v1/skill.md");
    expect(res.headers.get("content-type")).to.match(/^text\/markdown/);
    const text = await res.text();
    expect(text).to.contain("kit_version 2026.09.07").and.to.contain("`procurement.vendor-vetting` | 99 |");
    expect(text).to.contain("PAYMENT-SIGNATURE");
  });

  it("serves health with database readiness, and readiness as its own route", async () => {
    const health = (await (await get("/v1/health")).json()) as Record<string, unknown>;
    expect(health.status).to.equal("ok");
    expect(health.checks).to.deep.include.members([]);
    expect((health.checks as { name: string; ready: boolean }[])[0]).to.include({ name: "database", ready: true });
    expect((await get("/v1/health/ready")).status).to.equal(200);
  });

  it("echoes a well-formed x-request-id and generates one otherwise", async () => {
    const given = await get("/v1/health", { headers: { "x-request-id": "abc-123" } });
    expect(given.headers.get("x-request-id")).to.be.a("string");
    const res = await post("/svc.catalog.v1.CatalogService/GetHealth", "{}", { "x-request-id": "abc-123" });
    expect(res.headers.get("x-request-id")).to.equal("abc-123");
  });

  it("answers HEAD on a GET route with headers and no body", async () => {
    const res = await fetch(`${srv.url}/v1/services`, { method: "HEAD" });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal("");
  });
});

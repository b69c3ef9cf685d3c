import { expect } from "chai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "../fixtures/test-server.js";

const exec = promisify(execFile);

// The README's `buf curl` examples, run for real against a server (buf reads the schema from proto/).
describe("buf curl against the server", () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  const bufCurl = (...args: string[]) => exec("node_modules/.bin/buf", ["curl", "--schema", "proto", ...args]);

  it("reads the catalog over gRPC with HTTP/2 prior knowledge", async () => {
    const { stdout } = await bufCurl("--protocol", "grpc", "--http2-prior-knowledge", `${srv.url}/svc.catalog.v1.CatalogService/ListServices`);
    const res = JSON.parse(stdout) as { count: number; services: { skuId: string }[] };
    expect(res.count).to.equal(39);
    expect(res.services.map((s) => s.skuId)).to.include("security.enterprise-audit");
  });

  it("reads the rules over Connect, and a SKU with no engine is refused before any charge", async () => {
    const { stdout } = await bufCurl("--protocol", "connect", `${srv.url}/svc.rules.v1.RulesService/GetRules`);
    expect(JSON.parse(stdout)).to.have.property("rulesVersion", "2026-09-26");
    const err = await bufCurl("--protocol", "grpcweb", "-d", '{"sku_id":"translation.zh-en"}', `${srv.url}/svc.payment.v1.PaymentService/CallService`).catch((e: { stderr: string; stdout: string }) => e);
    expect(`${(err as { stdout: string }).stdout}${(err as { stderr: string }).stderr}`).to.contain("failed_precondition").and.to.contain("not sold on this server");
  });
});

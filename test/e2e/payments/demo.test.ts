import { expect } from "chai";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";

const exec = promisify(execFile);

describe("npm run demo", function () {
  this.timeout(60_000);
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  it("performs a complete paid call as a buyer would and shows its proof", async () => {
    const { stdout } = await exec("node_modules/.bin/tsx", ["scripts/demo.ts"], { env: { ...process.env, SVC_URL: srv.url } });
    expect(stdout).to.contain("HTTP 402");
    expect(stdout).to.contain("HTTP 200");
    expect(stdout).to.match(/"settlement_ref": "0x[0-9a-f]{64}"/);
    expect(stdout).to.contain("demo complete");
  });
});

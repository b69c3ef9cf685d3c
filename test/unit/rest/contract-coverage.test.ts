import { expect } from "chai";
import { restRoutes } from "../../../src/rest/routes.js";
import { RouteTable } from "../../../src/rest/route-table.js";

// Every endpoint of the spec's Endpoints section, as (method, spec path). Each must reach an RPC of
// the contract through the REST route table (documents aside).
const SPEC_ENDPOINTS: [string, string][] = [
  ["GET", "/v1/services"],
  ["GET", "/v1/skill.md"],
  ["GET", "/v1/health"],
  ["GET", "/v1/services/result/job_1"],
  ["GET", "/v1/proofs/settlements"],
  ["GET", "/v1/proofs/settlement/0xabc"],
  ["GET", "/v1/rules"],
  ["POST", "/v1/services/oracle.price-feed"],
  ["POST", "/v1/agents/register"],
  ["POST", "/a2a/agents/agent_x/wallet"],
  ["POST", "/a2a/agents/agent_x/callback"],
  ["GET", "/a2a/passport/someone"],
  ["GET", "/a2a/agents/someone/reputation"],
  ["GET", "/a2a/agents/someone/instructions"],
  ["GET", "/v1/wallet/balance"],
  ["GET", "/a2a/requests/open"],
  ["GET", "/a2a/requests/req_1"],
  ["POST", "/a2a/requests"],
  ["POST", "/a2a/requests/req_1/bids"],
  ["POST", "/a2a/bids/bid_1/accept"],
  ["GET", "/a2a/jobs/job_1"],
  ["POST", "/a2a/jobs/job_1/complete"],
  ["POST", "/a2a/witness/enroll"],
  ["GET", "/a2a/witness/seats"],
  ["GET", "/a2a/jobs/job_1/deliverable"],
  ["POST", "/a2a/witness/job_1/attest"],
  ["GET", "/markets-api/markets"],
  ["GET", "/markets-api/markets/m_1"],
  ["POST", "/markets-api/markets/predict"],
  ["POST", "/markets-api/compliance/check"],
  ["GET", "/markets-api/signals/latest"],
  ["POST", "/markets-api/agents/proofs"],
];

describe("contract coverage", () => {
  const noDoc = async () => ({ status: 200, body: {} });
  const table = new RouteTable(restRoutes({ openapi: noDoc, agentCard: noDoc, readiness: noDoc }));

  for (const [method, path] of SPEC_ENDPOINTS) {
    it(`${method} ${path} reaches an RPC of the contract`, () => {
      const m = table.match(method, path);
      expect(m.kind).to.equal("found");
      if (m.kind === "found") expect(m.route.kind).to.equal("rpc");
    });
  }

  it("routes literal segments before parameters (/a2a/requests/open is not a request id)", () => {
    const m = table.match("GET", "/a2a/requests/open");
    expect(m.kind === "found" && m.route.kind === "rpc" && m.route.rpc.name).to.equal("ListOpenRequests");
  });

  it("names the allowed methods for a known path with the wrong method", () => {
    expect(table.match("GET", "/a2a/requests")).to.deep.equal({ kind: "wrong_method", allow: ["POST"] });
    expect(table.match("DELETE", "/v1/services")).to.deep.equal({ kind: "wrong_method", allow: ["GET"] });
  });

  it("decodes path parameters and refuses malformed percent-encoding", () => {
    const m = table.match("GET", "/a2a/passport/caf%C3%A9");
    expect(m.kind === "found" && m.params).to.deep.equal({ agent: "café" });
    expect(table.match("GET", "/a2a/passport/%E0%A4%A").kind).to.equal("none");
  });
});

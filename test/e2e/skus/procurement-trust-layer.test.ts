import { expect } from "chai";
import { IDENTITY_REGISTRY } from "../../../src/chain/artifacts.js";
import { canonicalJson } from "../../../src/platform/canonical-json.js";
import { recordProof } from "../../../src/proof/proof-recorder.js";
import { ProofSigner, verifyProofSignature } from "../../../src/proof/proof-signer.js";
import { TrustLayerOutput } from "../../../src/skus/procurement-trust-layer.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { registerAgent, type RegisteredAgent } from "../../fixtures/agents.js";
import { newBuyer, usdcBalance, type Buyer } from "../../fixtures/buyer.js";
import { onboard, REGISTRY, walletClient } from "../../fixtures/identity.js";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { callPaid, callUnpaid, type Json } from "../../fixtures/sku-calls.js";

const SKU = "procurement.trust-layer";

describe("procurement.trust-layer: signed ledger-derived evidence about a registered agent", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let buyer: Buyer;
  let subjectWallet: Buyer;
  let agent: RegisteredAgent;
  let tokenId: bigint;
  before(async () => {
    srv = await startTestServer();
    buyer = await newBuyer(srv);
    subjectWallet = await newBuyer(srv);
    agent = await registerAgent(srv, { evm_address: subjectWallet.address });
    tokenId = await onboard(srv, subjectWallet, agent);
  });
  after(() => srv.close());

  const pay = (b: Buyer, sku: string, body: unknown) => callPaid(srv, b, sku, body);
  const post = (body: unknown) => callUnpaid(srv, SKU, body);

  it("reports passport, audit reports (30105), disputes, settlement proofs and flags, signed with the rail's key, for the exact price", async () => {
    // The subject's own paid call (kind 30120) and an audit report about it (kind 30105, as the enterprise audit records them).
    expect((await pay(subjectWallet, "agent.trust-badge", { subject: subjectWallet.address })).status).to.equal(200);
    const key = { hmacKey: srv.config.proofHmacKey, isDevelopmentKey: true, signer: ProofSigner.fromFile(srv.config.proofSigningKeyFile) };
    const report = await recordProof(srv.ds.manager, key, { kind: 30105, settlementRef: `audit-${agent.agent_id}`, taskClass: "security", ts: new Date(), body: { target: agent.name, subject: { agent_id: agent.agent_id }, score: 8 } });
    await recordProof(srv.ds.manager, key, { kind: 30105, settlementRef: `audit-other-${agent.agent_id}`, taskClass: "security", ts: new Date(), body: { target: "someone-else", owner: agent.name } });

    const before = await usdcBalance(srv, buyer.address);
    const res = await pay(buyer, SKU, { subject: agent.name });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await usdcBalance(srv, buyer.address)).to.equal(before - 10_000n);
    const d = res.body.deliverable;
    expect(TrustLayerOutput.safeParse(d).error).to.equal(undefined);
    expect(d).to.include({ subject: agent.name, matched_by: "name", revoked: false });
    expect(d.passport).to.include({ status: "verified", agent_id: agent.agent_id, name: agent.name, payout_wallet: subjectWallet.address, passport_url: `/a2a/passport/${agent.agent_id}` });
    expect(d.passport.onchain_identity).to.deep.include({ state: "verified" });
    expect(d.passport.onchain_identity.onchain.owner).to.equal(subjectWallet.address);
    expect(d.passport.onchain_identity.source.endpoint).to.equal(`eip155:84532:${REGISTRY}`);
    expect(d.audit_reports).to.deep.include({ proof_kind: 30105, count: 1 });
    expect(d.audit_reports.recent[0]).to.include({ proof_id: report.proofId, url: `/v1/proofs/${report.proofId}` });
    expect(d.dispute_record).to.include({ proof_kind: 30129, recorded: 0, upheld: 0 });
    expect(d.settlement_proofs).to.include({ paid_calls: 1, jobs_delivered: 0, jobs_requested: 0 });
    expect(d.settlement_proofs.recent[0].kind).to.equal(30120);
    expect(d.revocation_flags.map((f: Json) => [f.flag, f.raised])).to.deep.equal([["identity_link_revoked", false], ["identity_missing", false], ["disputes_upheld", false]]);
    expect(d.reputation).to.have.keys("score", "badge");
    expect(d.scope).to.contain("outside companies are never researched");

    // Anyone can check the signature with the published key.
    const keys = (await (await fetch(`${srv.url}/v1/proofs/keys`)).json()) as Json;
    const { signature, ...unsigned } = d;
    expect(signature).to.include({ alg: "Ed25519", public_key: keys.ed25519_public_keys[0], keys_url: "/v1/proofs/keys" });
    expect(verifyProofSignature(keys.ed25519_public_keys[0], canonicalJson(unsigned), signature.value)).to.equal(true);
    expect(verifyProofSignature(keys.ed25519_public_keys[0], canonicalJson({ ...unsigned, revoked: true }), signature.value)).to.equal(false);
    await expectLedgerConsistent(srv.ds);
  });

  it("resolves the subject by agent id and by ERC-8004 id (bare token id or global form, string or object)", async () => {
    for (const subject of [agent.agent_id, tokenId.toString(), `eip155:84532:${REGISTRY}:${tokenId}`, { erc8004_id: Number(tokenId), agent_registry: `eip155:84532:${REGISTRY}` }, { name: agent.name }]) {
      const res = await pay(buyer, SKU, { subject });
      expect(res.status, JSON.stringify(subject)).to.equal(200);
      expect(res.body.deliverable.passport.agent_id, JSON.stringify(subject)).to.equal(agent.agent_id);
    }
  });

  it("raises the revocation flag once the linked identity changes hands on-chain", async () => {
    const other = await newBuyer(srv);
    const hash = await walletClient(srv, subjectWallet).writeContract({ address: REGISTRY, abi: IDENTITY_REGISTRY.abi, functionName: "transferFrom", args: [subjectWallet.address, other.address, tokenId] });
    await srv.chain.publicClient.waitForTransactionReceipt({ hash });
    const d = (await pay(buyer, SKU, { subject: agent.name })).body.deliverable;
    expect(d.passport.status).to.equal("identity_revoked");
    expect(d.passport.onchain_identity.state).to.equal("controller_changed");
    expect(d.revoked).to.equal(true);
    expect(d.revocation_flags.find((f: Json) => f.flag === "identity_link_revoked")).to.include({ raised: true });
  });

  it("an agent without a linked identity is `registered`; a subject that is no registered passport is insufficient_subject, not charged, no challenge", async () => {
    const plain = await registerAgent(srv);
    expect((await pay(buyer, SKU, { subject: plain.name })).body.deliverable.passport).to.include({ status: "registered" });
    const before = await usdcBalance(srv, buyer.address);
    for (const subject of ["Acme Corporation", "acme-corp-ltd", buyer.address, "999999999", { name: "nobody-here" }]) {
      const res = await post({ subject });
      expect(res.status, JSON.stringify(subject)).to.equal(200);
      expect(res.challenged).to.equal(false);
      expect(res.body, JSON.stringify(subject)).to.include({ status: "insufficient_subject", charged: false });
    }
    expect((await post({ subject: "Acme Corporation" })).body.reason).to.contain("does not research outside companies");
    expect(await usdcBalance(srv, buyer.address)).to.equal(before);
  });

  it("refuses bad input with 400 before any challenge", async () => {
    for (const body of [{}, { subject: "" }, { subject: {} }, { subject: { erc8004_id: "abc" } }, { subject: 42 }]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.challenged).to.equal(false);
      expect(JSON.stringify(res.body.error), JSON.stringify(body)).to.contain("subject");
    }
  });
});

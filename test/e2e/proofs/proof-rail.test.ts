import { expect } from "chai";
import { createHash } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ProofService } from "../../../gen/svc/proof/v1/proof_service_pb.js";
import { canonicalRecordOf } from "../../../src/proof/verify-proof.js";
import { ProofRecordEntity } from "../../../src/proof/proof-record.entity.js";
import { verifyProofSignature } from "../../../src/proof/proof-signer.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer } from "../../fixtures/buyer.js";

type Json = Record<string, any>;

const canonicalOf = canonicalRecordOf;

describe("proof rail: signatures, keys and the stream", function () {
  this.timeout(180_000);
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

  async function paidCall(): Promise<string> {
    const buyer = await newBuyer(srv);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const res = await pay(`${srv.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: buyer.address }) });
    return ((await res.json()) as Json).payment_proof.tx_hash;
  }

  it("signs every record with Ed25519: a third party verifies it with the published key and catches tampering", async () => {
    const tx = await paidCall();
    const keys = (await (await fetch(`${srv.url}/v1/proofs/keys`)).json()) as Json;
    expect(keys.ed25519_public_keys).to.have.length(1);
    expect(Buffer.from(keys.ed25519_public_keys[0], "base64")).to.have.length(32);
    expect(keys.canonicalization).to.contain("RFC 8785");
    const proof = ((await (await fetch(`${srv.url}/v1/proofs/settlement/${tx}`)).json()) as Json).proof;
    const canonical = canonicalOf(proof);
    expect(createHash("sha256").update(canonical).digest("hex")).to.equal(proof.record_sha256);
    expect(verifyProofSignature(keys.ed25519_public_keys[0], canonical, proof.ed25519_signature)).to.equal(true);
    const tampered = canonicalOf({ ...proof, body: { ...proof.body, amount: "1" } });
    expect(verifyProofSignature(keys.ed25519_public_keys[0], tampered, proof.ed25519_signature)).to.equal(false);
    const forged = Buffer.from(proof.ed25519_signature, "base64");
    forged[0] ^= 1;
    expect(verifyProofSignature(keys.ed25519_public_keys[0], canonical, forged.toString("base64"))).to.equal(false);
  });

  it("streams 100k records in rail order, and resumes after a reconnect with no gap and no repeat", async () => {
    const start = (await srv.ds.manager.find(ProofRecordEntity, { order: { sequence: "DESC" }, take: 1 }))[0]?.sequence ?? 0;
    const TOTAL = 100_000;
    for (let i = 0; i < TOTAL; i += 1000) {
      await srv.ds.manager.insert(
        ProofRecordEntity,
        Array.from({ length: 1000 }, (_, j) => ({
          proofId: `prf_stream_${i + j}_${start}`,
          kind: (i + j) % 2 ? 30110 : 30119,
          settlementRef: null,
          taskClass: "stream-test",
          ts: new Date(),
          bodyJson: JSON.stringify({ n: i + j }),
          recordSha256: "0".repeat(64),
          integritySignature: "0".repeat(64),
          ed25519Signature: null,
        })),
      );
    }
    const client = createClient(ProofService, createGrpcTransport({ baseUrl: srv.url, sessionManager: h2 }));
    const seen: number[] = [];
    const first = new AbortController();
    for await (const msg of client.streamProofs({ afterSequence: BigInt(start) }, { signal: first.signal })) {
      seen.push(Number(msg.proof!.sequence));
      if (seen.length === 40_000) {
        first.abort(); // the connection drops mid-stream
        break;
      }
    }
    for await (const msg of client.streamProofs({ afterSequence: BigInt(seen.at(-1)!) })) seen.push(Number(msg.proof!.sequence));
    expect(seen.length).to.equal(TOTAL);
    const expected = (await srv.ds.manager.createQueryBuilder(ProofRecordEntity, "p").select("p.sequence", "s").where("p.sequence > :start", { start }).orderBy("p.sequence", "ASC").getRawMany()).map((r: { s: number }) => Number(r.s));
    expect(seen).to.deep.equal(expected);

    const onlyOneKind: number[] = [];
    for await (const msg of client.streamProofs({ afterSequence: BigInt(start), kinds: [30119] })) {
      expect(msg.proof!.kind).to.equal(30119);
      onlyOneKind.push(Number(msg.proof!.sequence));
    }
    expect(onlyOneKind).to.have.length(TOTAL / 2);
    await srv.ds.manager.delete(ProofRecordEntity, { taskClass: "stream-test" }); // keep them out of later anchoring
  });

  it("follows new records live", async () => {
    const last = (await srv.ds.manager.find(ProofRecordEntity, { order: { sequence: "DESC" }, take: 1 }))[0]!.sequence;
    const client = createClient(ProofService, createGrpcTransport({ baseUrl: srv.url, sessionManager: h2 }));
    const abort = new AbortController();
    const received = (async () => {
      for await (const msg of client.streamProofs({ afterSequence: BigInt(last), follow: true, kinds: [30120] }, { signal: abort.signal })) {
        abort.abort();
        return msg.proof!;
      }
      return undefined;
    })().catch(() => undefined);
    const tx = await paidCall();
    const proof = await received;
    expect(proof?.settlementRef).to.equal(tx);
  });
});

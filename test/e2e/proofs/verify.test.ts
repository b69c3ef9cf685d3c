import { expect } from "chai";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";
import { newBuyer } from "../../fixtures/buyer.js";

const exec = promisify(execFile);
type Json = Record<string, any>;

describe("Merkle anchoring and svc verify", function () {
  this.timeout(120_000);
  let srv: TestServer;
  let dir: string;
  before(async () => {
    srv = await startTestServer({ ANCHOR_BATCH_SIZE: "1000", ANCHOR_MAX_WAIT_SECONDS: "0", ANCHOR_POLL_MS: "100" });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-verify-"));
  });
  after(async () => {
    await srv.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const verify = async (target: string) => {
    const { DATABASE_URL: _d, CHAIN_RPC_URL: _c, ...env } = process.env;
    try {
      const { stdout } = await exec("node_modules/.bin/tsx", ["src/main.ts", "verify", target], { env: { ...env, SVC_URL: srv.url, LOG_LEVEL: "silent" } });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, out: e.stdout };
    }
  };
  const save = (name: string, proof: Json) => {
    const file = path.join(dir, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({ proof }));
    return file;
  };

  let proof: Json;
  before(async () => {
    const buyer = await newBuyer(srv);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:*", new ExactEvmScheme(buyer.account)));
    const res = await pay(`${srv.url}/v1/services/agent.trust-badge`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ subject: buyer.address }) });
    const tx = ((await res.json()) as Json).payment_proof.tx_hash;
    for (let i = 0; i < 100; i++) {
      proof = ((await (await fetch(`${srv.url}/v1/proofs/settlement/${tx}`)).json()) as Json).proof;
      if (proof.inclusion) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it("anchors records in Merkle batches and serves each proof with its inclusion path and anchor", async () => {
    expect(proof.inclusion).to.include.keys("root", "leaf_index", "path", "anchor_tx_hash", "anchor_network");
    expect(proof.inclusion.anchor_network).to.equal("eip155:84532");
    const keys = (await (await fetch(`${srv.url}/v1/proofs/keys`)).json()) as Json;
    const anchorTx = await srv.chain.publicClient.getTransaction({ hash: proof.inclusion.anchor_tx_hash });
    expect(anchorTx.input).to.equal(proof.inclusion.root);
    expect(anchorTx.from.toLowerCase()).to.equal(keys.anchor_address.toLowerCase());
    expect(keys.merkle_tree).to.contain("SimpleMerkleTree");
  });

  it("svc verify passes every check for an untouched proof, from a file or by its transaction hash", async () => {
    for (const target of [save("good", proof), proof.settlement_ref]) {
      const r = await verify(target);
      expect(r.code, r.out).to.equal(0);
      for (const check of ["hash", "signature", "inclusion", "anchor", "settlement"]) expect(r.out).to.match(new RegExp(`PASS\\s+${check}`));
    }
  });

  it("catches a tampered body, signature, inclusion path and anchor, naming what failed", async () => {
    const sig = Buffer.from(proof.ed25519_signature, "base64");
    sig[5] ^= 0xff;
    const cases: [string, Json, string][] = [
      ["body", { ...proof, body: { ...proof.body, amount: "1" } }, "hash"],
      ["signature", { ...proof, ed25519_signature: sig.toString("base64") }, "signature"],
      ["path", { ...proof, inclusion: { ...proof.inclusion, path: [`0x${"ab".repeat(32)}`, ...proof.inclusion.path] } }, "inclusion"],
      ["anchor", { ...proof, inclusion: { ...proof.inclusion, anchor_tx_hash: proof.settlement_ref } }, "anchor"],
    ];
    for (const [name, tampered, failing] of cases) {
      const r = await verify(save(name, tampered));
      expect(r.code, `${name}: ${r.out}`).to.equal(1);
      expect(r.out, name).to.match(new RegExp(`FAIL\\s+${failing}`));
    }
    const body = await verify(save("body2", { ...proof, body: { ...proof.body, amount: "1" } }));
    expect(body.out).to.contain("content was altered");
  });
});

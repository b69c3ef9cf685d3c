import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { DataSource } from "typeorm";
import { postEntry, accountBalance } from "../../../src/ledger/ledger.js";
import { openDataSource } from "../../../src/platform/db/data-source.js";
import { isUniqueViolation } from "../../../src/platform/db/errors.js";
import { newId } from "../../../src/platform/ids.js";
import { PROOF_KIND, recordProof, type ProofKey } from "../../../src/proof/proof-recorder.js";
import { ProofSigner } from "../../../src/proof/proof-signer.js";
import { testDatabaseConfig } from "../../fixtures/test-database.js";

// `fresh` writes skip the "already recorded?" read (the caller won the write that makes them due); the
// unique keys are then the only guard: a second fresh write of the same event must still be refused.

describe("ledger and proof rail: fresh writes keep exactly-once", function () {
  let ds: DataSource;
  let key: ProofKey;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-fresh-writes-"));
    key = { hmacKey: "fresh-writes-test", isDevelopmentKey: true, signer: ProofSigner.fromFile(path.join(dir, "proof.pem")) };
    ds = await openDataSource(testDatabaseConfig());
  });
  after(async () => {
    await ds?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a second fresh ledger entry of one event is refused by (kind, ref) and posts nothing", async () => {
    const ref = newId("pay");
    const account = `test:fresh:${ref}`;
    const postings = [
      { account, amount: 70n },
      { account: `${account}:other`, amount: -70n },
    ];
    expect(await postEntry(ds.manager, "sku_sale", ref, postings, { fresh: true })).to.equal(true);
    const err = await postEntry(ds.manager, "sku_sale", ref, postings, { fresh: true }).catch((e: unknown) => e);
    expect(isUniqueViolation(err)).to.equal(true);
    expect(await postEntry(ds.manager, "sku_sale", ref, postings)).to.equal(false);
    expect(await accountBalance(ds.manager, account)).to.equal(70n);
  });

  it("a second fresh proof of one (kind, settlement_ref) is refused; the checked path returns the stored one", async () => {
    const input = { kind: PROOF_KIND.settledOutcome, settlementRef: `0x${"ab".repeat(32)}:${Date.now()}`, taskClass: "test", ts: new Date(), body: { n: 1 } };
    const first = await recordProof(ds.manager, key, input, undefined, { fresh: true });
    expect(first.sequence).to.be.a("number");
    const err = await recordProof(ds.manager, key, input, undefined, { fresh: true }).catch((e: unknown) => e);
    expect(isUniqueViolation(err)).to.equal(true);
    expect((await recordProof(ds.manager, key, input)).proofId).to.equal(first.proofId);
  });
});

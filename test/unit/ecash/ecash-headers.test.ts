import { expect } from "chai";
import { ConnectError } from "@connectrpc/connect";
import { errorReason } from "../../../src/platform/rpc/errors.js";
import { PaymentRequest } from "@cashu/cashu-ts";
import { cashuTokenFromHeaders, ecashChallengeHeader } from "../../../src/ecash/ecash-headers.js";
import { parseMintList } from "../../../src/ecash/mint-allowlist.js";
import { loadConfig } from "../../../src/config.js";

const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof ConnectError ? errorReason(err) : String(err);
  }
  return undefined;
};

describe("ecash payment headers and the mint allowlist", () => {
  it("reads the token from X-402-Payment or X-Cashu (Fetch Headers or Node header objects)", () => {
    expect(cashuTokenFromHeaders(new Headers({ "X-402-Payment": " cashuBabc " }))).to.equal("cashuBabc");
    expect(cashuTokenFromHeaders(new Headers({ "X-Cashu": "cashuBdef" }))).to.equal("cashuBdef");
    expect(cashuTokenFromHeaders({ "x-cashu": "cashuBdef", "x-402-payment": "cashuBdef" })).to.equal("cashuBdef");
    expect(cashuTokenFromHeaders({ "content-type": "application/json" })).to.equal(undefined);
  });

  it("refuses ambiguous headers (ecash_invalid)", () => {
    expect(reasonOf(() => cashuTokenFromHeaders({ "x-cashu": "cashuBa", "x-402-payment": "cashuBb" }))).to.equal("ecash_invalid");
    expect(reasonOf(() => cashuTokenFromHeaders({ "x-cashu": ["cashuBa", "cashuBa"] }))).to.equal("ecash_invalid");
    const repeated = new Headers();
    repeated.append("X-Cashu", "cashuBa");
    repeated.append("X-Cashu", "cashuBb");
    expect(reasonOf(() => cashuTokenFromHeaders(repeated))).to.equal("ecash_invalid");
    expect(reasonOf(() => cashuTokenFromHeaders({ "x-402-payment": "  " }))).to.equal("ecash_invalid");
  });

  it("builds the NUT-24 X-Cashu challenge (a NUT-18 payment request) that wallets decode", () => {
    const header = ecashChallengeHeader(1_500n, ["https://mint.example.com"], "stake on m1");
    expect(header).to.match(/^creqA/);
    const decoded = PaymentRequest.fromEncodedRequest(header);
    expect(decoded.amount?.toBigInt()).to.equal(1_500n);
    expect(decoded).to.include({ unit: "sat", singleUse: true, description: "stake on m1" });
    expect(decoded.mints).to.deep.equal(["https://mint.example.com"]);
  });

  it("normalizes CASHU_MINTS like wallets and tokens name mints, and refuses bad entries", () => {
    expect(parseMintList(" https://Mint.Example.com/ ,https://mint.example.com, https://m2.example.com:443/cashu/ ")).to.deep.equal([
      "https://mint.example.com",
      "https://m2.example.com/cashu",
    ]);
    expect(parseMintList("")).to.deep.equal([]);
    expect(() => parseMintList("ftp://mint.example.com")).to.throw(/not a mint URL/);
    expect(() => parseMintList("https://user:pw@mint.example.com")).to.throw(/not a mint URL/);
    expect(loadConfig({ CASHU_MINTS: "https://Mint.Example.com/" }).cashu).to.include({ timeoutMs: 10_000, proofKeyIsDev: true });
    expect(loadConfig({ CASHU_MINTS: "https://Mint.Example.com/" }).cashu.mints).to.deep.equal(["https://mint.example.com"]);
    expect(() => loadConfig({ CASHU_MINTS: "https://mint.example.com?x=1" })).to.throw(/CASHU_MINTS/);
  });
});

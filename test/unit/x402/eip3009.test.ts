import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../../src/x402/eip3009.js";
import { expect } from "chai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { hashTypedData, recoverTypedDataAddress, toHex, type Hex } from "viem";
import { randomBytes } from "node:crypto";
import { authorizationDigest, domainSeparator, recoverSigner, SignatureFormatError, type Authorization, type Eip712Domain } from "../../../src/x402/eip3009.js";

const DOMAIN: Eip712Domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" };
const TYPES = TRANSFER_WITH_AUTHORIZATION_TYPES;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

async function signed() {
  const account = privateKeyToAccount(generatePrivateKey());
  const auth: Authorization = {
    from: account.address,
    to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    value: 10_000n,
    validAfter: 0n,
    validBefore: 1_900_000_000n,
    nonce: toHex(randomBytes(32)),
  };
  const signature = await account.signTypedData({ domain: DOMAIN, types: TYPES, primaryType: "TransferWithAuthorization", message: auth });
  return { account, auth, signature };
}

describe("EIP-3009 digest and libsecp256k1 recovery", () => {
  const separator = domainSeparator(DOMAIN);

  it("computes the same digest as viem's hashTypedData", async () => {
    const { auth } = await signed();
    const ours = toHex(authorizationDigest(separator, auth));
    expect(ours).to.equal(hashTypedData({ domain: DOMAIN, types: TYPES, primaryType: "TransferWithAuthorization", message: auth }));
  });

  it("recovers the same signer as viem's recoverTypedDataAddress, for many keys", async () => {
    for (let i = 0; i < 20; i++) {
      const { account, auth, signature } = await signed();
      expect(recoverSigner(authorizationDigest(separator, auth), signature)).to.equal(account.address);
      expect(await recoverTypedDataAddress({ domain: DOMAIN, types: TYPES, primaryType: "TransferWithAuthorization", message: auth, signature })).to.equal(account.address);
    }
  });

  it("recovers a different address when any signed field changes", async () => {
    const { account, auth, signature } = await signed();
    const tampered = { ...auth, value: auth.value + 1n };
    expect(recoverSigner(authorizationDigest(separator, tampered), signature)).to.not.equal(account.address);
    const otherChain = domainSeparator({ ...DOMAIN, chainId: 8453 });
    expect(recoverSigner(authorizationDigest(otherChain, auth), signature)).to.not.equal(account.address);
  });

  it("refuses the malleable high-s twin of a valid signature", async () => {
    const { auth, signature } = await signed();
    const r = signature.slice(2, 66);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = parseInt(signature.slice(130), 16);
    const twin = `0x${r}${(N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
    expect(() => recoverSigner(authorizationDigest(separator, auth), twin)).to.throw(SignatureFormatError, /upper half/);
  });

  it("refuses signatures of the wrong length or with a bad v", async () => {
    const { auth, signature } = await signed();
    const digest = authorizationDigest(separator, auth);
    expect(() => recoverSigner(digest, signature.slice(0, -2) as Hex)).to.throw(SignatureFormatError);
    expect(() => recoverSigner(digest, `${signature.slice(0, -2)}1d` as Hex)).to.throw(SignatureFormatError, /v must be/);
    expect(() => recoverSigner(digest, "0xzz" as Hex)).to.throw(SignatureFormatError);
  });
});

import { randomBytes } from "node:crypto";
import secp256k1 from "secp256k1";
import { toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizationDigest, domainSeparator, type Authorization } from "../../src/x402/eip3009.js";

// Buyer keys for `npm run bench:load` and their pre-signed x402 v2 payments. Every payment is a real
// EIP-3009 authorization signed for the challenge's requirements (signing uses libsecp256k1 so that
// pre-signing thousands takes a moment; the signature is the same as any wallet's).

export interface Buyer {
  address: Address;
  key: Uint8Array;
}

export function newBuyers(n: number): Buyer[] {
  return Array.from({ length: n }, () => {
    const pk = generatePrivateKey();
    return { address: privateKeyToAccount(pk).address, key: Buffer.from(pk.slice(2), "hex") };
  });
}

/** The `PAYMENT-REQUIRED` header of a 402, decoded. */
export function decodeRequired(header: string | string[] | undefined): { resource?: unknown; accepts: Record<string, any>[] } {
  if (typeof header !== "string") throw new Error("the 402 carries no PAYMENT-REQUIRED header");
  return JSON.parse(Buffer.from(header, "base64").toString("utf8"));
}

/** `count` PAYMENT-SIGNATURE headers paying `accepted`, round-robin over the buyers. */
export function signPayments(buyers: Buyer[], required: { resource?: unknown; accepts: Record<string, any>[] }, count: number, offset = 0): string[] {
  const accepted = required.accepts[0]!;
  const chainId = Number(String(accepted.network).split(":")[1]);
  const separator = domainSeparator({ name: accepted.extra.name, version: accepted.extra.version, chainId, verifyingContract: accepted.asset });
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3_600);
  return Array.from({ length: count }, (_, i) => {
    const buyer = buyers[(i + offset) % buyers.length]!;
    const auth: Authorization = { from: buyer.address, to: accepted.payTo, value: BigInt(accepted.amount), validAfter: 0n, validBefore, nonce: toHex(randomBytes(32)) as Hex };
    const { signature, recid } = secp256k1.ecdsaSign(authorizationDigest(separator, auth), buyer.key);
    const sig = (toHex(signature) + (27 + recid).toString(16)) as Hex;
    const payload = {
      x402Version: 2,
      ...(required.resource ? { resource: required.resource } : {}),
      accepted,
      payload: { signature: sig, authorization: { from: auth.from, to: auth.to, value: auth.value.toString(), validAfter: "0", validBefore: validBefore.toString(), nonce: auth.nonce } },
    };
    return Buffer.from(JSON.stringify(payload)).toString("base64");
  });
}

import { createRequire } from "node:module";
import { keccak256 } from "../chain/keccak.js";
import { getAddress, type Address, type Hex } from "viem";

// EIP-3009 TransferWithAuthorization digests and signer recovery on libsecp256k1 (native), with the
// EIP-712 domain separator computed once per (token, chain). Pure-JS recovery manages ~500/s per core;
// this path is what the payment gate runs for every paid call.

const secp256k1 = createRequire(import.meta.url)("secp256k1") as {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
};

const utf8 = (s: string) => new TextEncoder().encode(s);
const DOMAIN_TYPEHASH = keccak256(utf8("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"));
export const TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
  utf8("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"),
);
/** Half the secp256k1 order: signatures with a larger `s` are malleable; USDC refuses them. */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** EIP-712 types of TransferWithAuthorization, for signers (viem `signTypedData`). */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export class SignatureFormatError extends Error {}

function hexBytes(hex: string, length: number, what: string): Uint8Array {
  if (!/^0x[0-9a-fA-F]*$/.test(hex) || hex.length !== 2 + length * 2) throw new SignatureFormatError(`${what} must be ${length} bytes of 0x-hex`);
  return Buffer.from(hex.slice(2), "hex");
}

function word(value: bigint): Uint8Array {
  if (value < 0n || value >= 1n << 256n) throw new SignatureFormatError("uint256 out of range");
  return Buffer.from(value.toString(16).padStart(64, "0"), "hex");
}

function addressWord(address: string): Uint8Array {
  const out = new Uint8Array(32);
  out.set(hexBytes(address, 20, "address"), 12);
  return out;
}

export function domainSeparator(d: Eip712Domain): Uint8Array {
  const buf = new Uint8Array(32 * 5);
  buf.set(DOMAIN_TYPEHASH, 0);
  buf.set(keccak256(utf8(d.name)), 32);
  buf.set(keccak256(utf8(d.version)), 64);
  buf.set(word(BigInt(d.chainId)), 96);
  buf.set(addressWord(d.verifyingContract), 128);
  return keccak256(buf);
}

/** The EIP-712 digest a payer signs for `auth` under a precomputed domain separator. */
export function authorizationDigest(separator: Uint8Array, auth: Authorization): Uint8Array {
  const struct = new Uint8Array(32 * 7);
  struct.set(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, 0);
  struct.set(addressWord(auth.from), 32);
  struct.set(addressWord(auth.to), 64);
  struct.set(word(auth.value), 96);
  struct.set(word(auth.validAfter), 128);
  struct.set(word(auth.validBefore), 160);
  struct.set(hexBytes(auth.nonce, 32, "nonce"), 192);
  const msg = new Uint8Array(66);
  msg[0] = 0x19;
  msg[1] = 0x01;
  msg.set(separator, 2);
  msg.set(keccak256(struct), 34);
  return keccak256(msg);
}

/**
 * Recovers the signer of a 65-byte (r, s, v) signature over `digest`. Refuses high-s and v other
 * than 27/28 (or 0/1), as USDC does. Returns the checksummed address.
 */
export function recoverSigner(digest: Uint8Array, signature: Hex): Address {
  const sig = hexBytes(signature, 65, "signature");
  const s = BigInt(`0x${Buffer.from(sig.subarray(32, 64)).toString("hex")}`);
  if (s > HALF_ORDER) throw new SignatureFormatError("signature s value is in the upper half of the order (malleable)");
  const v = sig[64]!;
  const recid = v >= 27 ? v - 27 : v;
  if (recid !== 0 && recid !== 1) throw new SignatureFormatError("signature v must be 27 or 28");
  let pub: Uint8Array;
  try {
    pub = secp256k1.ecdsaRecover(sig.subarray(0, 64), recid, digest, false);
  } catch {
    throw new SignatureFormatError("signature does not recover to a public key");
  }
  const hash = keccak256(pub.subarray(1));
  return getAddress(`0x${Buffer.from(hash.subarray(12)).toString("hex")}`);
}

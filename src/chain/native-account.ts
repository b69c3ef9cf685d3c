import secp256k1 from "secp256k1";
import { bytesToHex, hexToBytes, serializeTransaction, type Hex, type PrivateKeyAccount, type SerializeTransactionFn, type TransactionSerializable } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { keccak256 } from "./keccak.js";

// viem's local account for a private key, with transactions signed on libsecp256k1 (the native binding the
// payment verifier already uses) instead of viem's pure-JS curve: ~0.75 ms a signature here, paid per
// settlement transaction, to a few µs. The signature is the same (RFC 6979 deterministic nonce, low s), so
// the signed transaction is byte for byte what viem's own account produces; messages and typed data keep
// viem's signing.

export function accountFromKey(privateKey: Hex): PrivateKeyAccount {
  const account = privateKeyToAccount(privateKey);
  const key = hexToBytes(privateKey);
  const signTransaction = async <T extends TransactionSerializable>(transaction: T, options?: { serializer?: SerializeTransactionFn<T> }) => {
    const serializer = options?.serializer ?? (serializeTransaction as SerializeTransactionFn<T>);
    // As viem signs: an EIP-4844 transaction's signing payload leaves the sidecars out.
    const signable = transaction.type === "eip4844" ? { ...transaction, sidecars: false } : transaction;
    const hash = keccak256(hexToBytes(await serializer(signable)));
    const { signature, recid } = secp256k1.ecdsaSign(hash, key);
    return serializer(transaction, { r: bytesToHex(signature.subarray(0, 32)), s: bytesToHex(signature.subarray(32)), v: recid ? 28n : 27n, yParity: recid });
  };
  return { ...account, signTransaction } as PrivateKeyAccount;
}

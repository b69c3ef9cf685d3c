import fs from "node:fs";
import path from "node:path";
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";

// Ed25519 signatures on proof records, so anyone can verify them with the published public key
// (GET /v1/proofs/keys). The private key lives in a PEM file (created on first start, mode 0600);
// operators keep that file, or point PROOF_SIGNING_KEY_FILE at their own.

export class ProofSigner {
  private constructor(private readonly privateKey: KeyObject, readonly publicKey: KeyObject) {}

  static fromFile(file: string): ProofSigner {
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const { privateKey } = generateKeyPairSync("ed25519");
      fs.writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600, flag: "wx" });
    }
    const privateKey = createPrivateKey(fs.readFileSync(file));
    if (privateKey.asymmetricKeyType !== "ed25519") throw new Error(`${file} is not an Ed25519 private key`);
    return new ProofSigner(privateKey, createPublicKey(privateKey));
  }

  /** Base64 Ed25519 signature over the UTF-8 bytes of `message`. */
  sign(message: string): string {
    return sign(null, Buffer.from(message, "utf8"), this.privateKey).toString("base64");
  }

  /** The raw 32-byte public key, base64. */
  publicKeyBase64(): string {
    return Buffer.from(this.publicKey.export({ format: "jwk" }).x!, "base64url").toString("base64");
  }
}

/** Verifies a record signature against a raw base64 public key (what a third party does). */
export function verifyProofSignature(publicKeyBase64: string, message: string, signatureBase64: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKeyBase64, "base64").toString("base64url") }, format: "jwk" });
    return verify(null, Buffer.from(message, "utf8"), key, Buffer.from(signatureBase64, "base64"));
  } catch {
    return false;
  }
}

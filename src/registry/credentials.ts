import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { newId } from "../platform/ids.js";

// Bearer credentials: `<prefix>_<id>_<secret>`. The id is public and indexes the row; only a SHA-256
// digest of the 256-bit secret is stored, compared in constant time. The API key is `svck_…`, a
// starter-credit note `svcn_…`: the prefixes keep one from being mistaken for the other.

export const API_KEY_PREFIX = "svck";
export const NOTE_PREFIX = "svcn";
const FORM = /^(svck|svcn)_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface IssuedCredential {
  id: string;
  token: string;
  secretHash: string;
}

const digest = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

export function issueCredential(prefix: typeof API_KEY_PREFIX | typeof NOTE_PREFIX): IssuedCredential {
  const id = newId("x", 12).slice(2);
  const secret = randomBytes(32).toString("base64url");
  return { id, token: `${prefix}_${id}_${secret}`, secretHash: digest(secret) };
}

/** Splits a presented token; undefined when it is not of the form. */
export function parseCredential(token: string): { prefix: string; id: string; secret: string } | undefined {
  const m = FORM.exec(token.trim());
  return m ? { prefix: m[1]!, id: m[2]!, secret: m[3]! } : undefined;
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(digest(secret), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** AES-256-GCM for secrets the server must read back (webhook signing secrets). */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    this.key = createHash("sha256").update(keyMaterial).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64url")).join(".");
  }

  open(sealed: string): string {
    const [iv, tag, data] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
    const decipher = createDecipheriv("aes-256-gcm", this.key, iv!);
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(data!), decipher.final()]).toString("utf8");
  }
}

import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A random id `<prefix>_<n chars>` from a secure source (36-letter alphabet, no modulo bias). */
export function newId(prefix: string, length = 20): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 252 && out.length < length) out += ALPHABET[byte % 36];
    }
  }
  return `${prefix}_${out}`;
}

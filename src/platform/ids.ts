import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

// Random bytes are drawn 4 KB at a time from the secure source and each byte is used once: a paid call makes
// a dozen ids, and one randomBytes() call per id cost more than the rest of the id.
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++]!;
}

/** A random id `<prefix>_<n chars>` from a secure source (36-letter alphabet, no modulo bias). */
export function newId(prefix: string, length = 20): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 252) out += ALPHABET[byte % 36];
  }
  return `${prefix}_${out}`;
}

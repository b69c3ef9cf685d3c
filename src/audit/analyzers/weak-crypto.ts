import type { Auditor, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode } from "../source-file.js";

// Auditor 10, insecure cryptography.
//
// Rules:
// - crypto.weak-password-hash (high): MD5 or SHA-1 (createHash('md5'|'sha1'), hashlib.md5/sha1,
//   CryptoJS.MD5/SHA1, md5(…), sha1(…)) on a line, or followed within two lines by, a password.
// - crypto.insecure-random (high): Math.random() or Python's random module (random, randint, choice,
//   choices, getrandbits, randrange, sample) producing a token, secret, key, password, nonce, salt, OTP,
//   session id, reset code or IV.
// - crypto.broken-cipher (medium): ECB mode (aes-*-ecb, MODE_ECB), DES/3DES, RC4 or Blowfish cipher
//   names, or the deprecated crypto.createCipher (key derivation without an IV).
// - crypto.weak-hash (low): MD5 or SHA-1 used for anything else (integrity, ids): collisions are practical.

const WEAK_HASH = /createHash\(\s*["'](?:md5|sha1)["']|\bhashlib\.(?:md5|sha1)\s*\(|\bCryptoJS\.(?:MD5|SHA1)\s*\(|(?<![\w$.])(?:md5|sha1)\s*\(|hashlib\.new\(\s*["'](?:md5|sha1)["']/i;
const PASSWORD = /passw(?:or)?d|passwd|\bpwd\b|passphrase/i;
const JS_RANDOM = /\bMath\.random\s*\(/;
const PY_RANDOM = /(?<![\w.])random\.(?:random|randint|choice|choices|getrandbits|randrange|sample)\s*\(/;
const SECRET_USE = /token|secret|\bkey\b|api_?key|apiKey|passw|nonce|salt|\botp\b|session|reset|verification_?code|\biv\b|csrf|invite/i;
const BROKEN = /aes-\d+-ecb|\bMODE_ECB\b|["'](?:des|des-ede3?|des-ede3-cbc|des-cbc|rc4|bf|bf-cbc|blowfish)["']|\bDES3?\.new\s*\(|\bARC4\.new\s*\(|\bcreateCipher\s*\(/i;

const RULES: RuleDef[] = [
  { id: "crypto.weak-password-hash", severity: "high", title: "Passwords hashed with MD5 or SHA-1", detects: "MD5/SHA-1 applied where a password is named (same line or the next two)", recommendation: "Hash passwords with a slow, salted KDF: argon2id, scrypt or bcrypt." },
  { id: "crypto.insecure-random", severity: "high", title: "Non-cryptographic randomness for a secret", detects: "Math.random() or Python random.* producing tokens, keys, passwords, nonces, salts, OTPs, session ids, IVs", recommendation: "Use crypto.randomBytes / crypto.randomUUID / crypto.getRandomValues, or Python's secrets module." },
  { id: "crypto.broken-cipher", severity: "medium", title: "Broken cipher or mode", detects: "ECB mode, DES/3DES, RC4, Blowfish, or crypto.createCipher", recommendation: "Use an AEAD cipher (AES-256-GCM, ChaCha20-Poly1305) with a random nonce per message." },
  { id: "crypto.weak-hash", severity: "low", title: "MD5 or SHA-1 in use", detects: "MD5/SHA-1 outside password handling", recommendation: "Use SHA-256 or better where collisions matter (integrity, signatures, identifiers of untrusted content)." },
];

export const weakCryptoAuditor: Auditor = {
  id: "weak-crypto",
  name: "Insecure cryptography",
  summary: "MD5/SHA-1 for passwords, Math.random for secrets, broken ciphers and modes",
  rules: RULES,
  analyze(view) {
    return view.files.filter(isCode).flatMap((f) => {
      const random = f.language === "python" ? PY_RANDOM : JS_RANDOM;
      return lineHits(f, (line, i) => [
        WEAK_HASH.test(line) && (PASSWORD.test(f.code.slice(Math.max(0, i - 1), i + 3).join(" ")) ? "crypto.weak-password-hash" : "crypto.weak-hash"),
        random.test(line) && SECRET_USE.test(line) && "crypto.insecure-random",
        BROKEN.test(line) && "crypto.broken-cipher",
      ]);
    });
  },
};

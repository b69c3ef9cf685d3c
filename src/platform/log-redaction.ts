// What log lines never carry. Two layers: pino `redact` paths for the places credentials live in
// structured objects (request/response headers, error objects of HTTP clients, config dumps), and a
// final scrub of the serialized line that replaces every configured secret value wherever it ended up
// (an error message quoting a URL, a nested object no path names).

const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie", "set-cookie", "payment-signature", "x-payment", "x-402-payment", "x-cashu", "x-api-key"];
const HEADER_HOLDERS = ["req.headers", "res.headers", "headers", "*.headers", "err.config.headers", "err.request.headers", "err.response.headers", "err.cause.headers", "err.metadata"];
/** Secret-bearing keys of Config (and of settings objects in general), at the top level and one or two levels down. */
const SECRET_KEYS = [
  "treasuryPrivateKey",
  "facilitatorPrivateKey",
  "facilitatorAuthToken",
  "facilitatorApiKey",
  "proofHmacKey",
  "webhookSecretKey",
  "operatorApiKey",
  "metricsToken",
  "apiKey",
  "proofKey",
  "privateKey",
  "password",
  "secret",
  "authToken",
];

export const REDACT_PATHS: string[] = [
  ...HEADER_HOLDERS.flatMap((h) => CREDENTIAL_HEADERS.map((name) => `${h}["${name}"]`)),
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]),
  "config.database.url",
  "database.url",
];

export const REDACTED = "[redacted]";

/** A function that replaces every occurrence of each secret (raw, JSON-escaped, URL-encoded) in a log line. */
export function secretScrubber(secrets: readonly (string | undefined)[]): ((line: string) => string) | undefined {
  const needles = new Set<string>();
  for (const s of secrets) {
    if (!s || s.length < 8) continue; // too short to scrub without mangling ordinary text
    needles.add(s);
    needles.add(JSON.stringify(s).slice(1, -1));
    needles.add(encodeURIComponent(s));
    if (/^0x[0-9a-fA-F]{64}$/.test(s)) needles.add(s.slice(2)); // a private key without its prefix
  }
  const list = [...needles].sort((a, b) => b.length - a.length);
  if (!list.length) return undefined;
  return (line) => {
    for (const n of list) if (line.includes(n)) line = line.split(n).join(REDACTED);
    return line;
  };
}

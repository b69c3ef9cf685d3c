import { callArgs, taintedNames, untrusted } from "../code-patterns.js";
import type { Auditor, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode, isConfig, mentions } from "../source-file.js";

// Auditor 4, unsafe network egress: outbound requests an attacker can aim, and transport without
// verification or encryption.
//
// Rules:
// - egress.tls-verification-disabled (high): rejectUnauthorized: false, NODE_TLS_REJECT_UNAUTHORIZED=0,
//   verify=False, InsecureSkipVerify: true, ssl.CERT_NONE, ssl._create_unverified_context, curl -k/--insecure.
// - egress.user-supplied-url (high): an HTTP client call (fetch, axios, got, http(s).get/request,
//   requests, httpx, urlopen) whose URL is request data or a name assigned from it, in a file with no
//   allowlist check (allowlist, allowedHosts, ALLOWED_HOSTS/DOMAINS/ORIGINS, whitelist, isAllowed…).
// - egress.plaintext-transport (medium): an http:// or ws:// URL literal to a host other than localhost,
//   127.0.0.1, 0.0.0.0, ::1, *.local, *.internal, example.* or a schema/namespace host (w3.org, json-schema.org…).

const TLS_OFF = /rejectUnauthorized["']?\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED["']?\s*[:=]\s*["']?0\b|\bverify\s*=\s*False\b|InsecureSkipVerify\s*:\s*true|\bCERT_NONE\b|_create_unverified_context|\bcurl\b[^\n]*\s(?:-k|--insecure)\b|["']?\bstrictSSL["']?\s*:\s*false/;
const CLIENT_CALL = /\b(?:fetch|axios(?:\.(?:get|post|put|patch|delete|head|request))?|got(?:\.(?:get|post))?|https?\.(?:get|request)|requests\.(?:get|post|put|patch|delete|head|request)|httpx\.(?:get|post|put|patch|delete|request|stream)|(?:urllib\.request\.)?urlopen|session\.(?:get|post))\s*\(/g;
const ALLOWLIST = /allow_?list|allowList|ALLOWED_(?:HOSTS|DOMAINS|ORIGINS|URLS)|allowed_?(?:hosts|domains|origins|urls)|allowedHosts|allowedDomains|whitelist|isAllowed(?:Url|Host)?\s*\(/i;
const PLAIN_URL = /["'`](?:http|ws):\/\/([^/"'`\s:]+)/g;
const SAFE_HOST = /^(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?|[\w.-]+\.(?:local|internal|localhost|test)|(?:[\w-]+\.)*example\.(?:com|org|net)|(?:www\.)?w3\.org|json-schema\.org|schemas\.[\w.-]+|xmlns\.com|purl\.org|ns\.adobe\.com|schemas\.xmlsoap\.org)$/i;

const RULES: RuleDef[] = [
  { id: "egress.tls-verification-disabled", severity: "high", title: "TLS certificate verification disabled", detects: "rejectUnauthorized: false, NODE_TLS_REJECT_UNAUTHORIZED=0, verify=False, InsecureSkipVerify, CERT_NONE, unverified SSL contexts, curl -k", recommendation: "Keep certificate verification on; trust a private CA explicitly if one is needed." },
  { id: "egress.user-supplied-url", severity: "high", title: "Request to a caller-supplied URL without an allowlist (SSRF)", detects: "an HTTP client call whose URL comes from request data, in a file with no allowlist check", recommendation: "Resolve and check every outbound URL against an allowlist of hosts, refuse private and link-local addresses, cap redirects and response sizes." },
  { id: "egress.plaintext-transport", severity: "medium", title: "Unencrypted http:// or ws:// endpoint", detects: "an http:// or ws:// URL literal to a non-local host", recommendation: "Use https:// and wss://; never send credentials or agent messages in clear." },
];

export const networkEgressAuditor: Auditor = {
  id: "network-egress",
  name: "Unsafe network egress",
  summary: "fetches of user-supplied URLs without an allowlist, disabled TLS verification, cleartext endpoints",
  rules: RULES,
  analyze(view) {
    return view.files
      .filter((f) => isCode(f) || isConfig(f))
      .flatMap((f) => {
        const tainted = isCode(f) ? taintedNames(f) : new Set<string>();
        const checkCalls = isCode(f) && !mentions(f, ALLOWLIST);
        const fetchesUntrusted = (line: string) => [...line.matchAll(CLIENT_CALL)].some((m) => untrusted(callArgs(line, m.index! + m[0].length - 1).split(",")[0] ?? "", tainted));
        const cleartext = (line: string) => [...line.matchAll(PLAIN_URL)].some((m) => !SAFE_HOST.test(m[1]!) && !/^[$\{]/.test(m[1]!));
        return lineHits(f, (line) => [
          TLS_OFF.test(line) && "egress.tls-verification-disabled",
          checkCalls && fetchesUntrusted(line) && "egress.user-supplied-url",
          cleartext(line) && "egress.plaintext-transport",
        ]);
      });
  },
};

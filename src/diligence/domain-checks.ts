import { detectKind, schemaIssues } from "../agent-cards/card-schemas.js";
import { followRedirects } from "../platform/http/follow-redirects.js";
import { UnsafeUrlError, type SafeFetchPolicy, type SafeFullResponse } from "../platform/http/safe-fetch.js";
import { scanContent } from "../trust/content-scan.js";
import type { ScreenCheck } from "./screen-check.js";

// The due-diligence checks of a buyer-supplied domain, each one request through the safe fetcher
// (redirects re-checked hop by hop), with its rule:
//   domain.tls           (core) served over https with a certificate Node's default CA store accepts:
//                              pass; plain http or a certificate error: fail; no connection: warn
//   domain.reachable     (core) the home page answers 2xx after redirects: pass; another status: warn;
//                              no answer (or a redirect into a private range): fail
//   domain.security_txt  (info) /.well-known/security.txt (RFC 9116) with a Contact field and an Expires
//                              date in the future: pass; present without them, or absent: warn
//   domain.a2a_card      (info) /.well-known/agent-card.json (else agent.json, A2A 0.2) is a valid A2A
//                              card: pass; absent or not valid: warn
// A document that trips the content-trap scan fails its check (its text is not quoted). Nothing beyond
// these requests is looked up.

const TIMEOUT_MS = 8_000;
const MAX_BYTES = 256 * 1024;
const USER_AGENT = "svc-due-diligence/1.0";
const TLS_ERROR = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/i;

type Fetched = { ok: true; finalUrl: string; redirects: number; response: SafeFullResponse } | { ok: false; error: Error };

async function get(url: string, policy: SafeFetchPolicy): Promise<Fetched> {
  try {
    const { hops, response } = await followRedirects(url, "GET", policy, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, userAgent: USER_AGENT });
    return { ok: true, finalUrl: hops.at(-1)!.url, redirects: hops.length - 1, response };
  } catch (err) {
    return { ok: false, error: err as Error };
  }
}

const errorText = (e: Error) => `${(e as NodeJS.ErrnoException).code ? `${(e as NodeJS.ErrnoException).code}: ` : ""}${e.message}`;
const isTlsError = (e: Error) => TLS_ERROR.test(String((e as NodeJS.ErrnoException).code ?? "")) || /certificate|ssl|tls/i.test(e.message);

/** The `Contact` values and `Expires` date of a security.txt (RFC 9116 fields, case-insensitive). */
export function securityTxtFields(text: string): { contacts: string[]; expires: Date | undefined } {
  const contacts: string[] = [];
  let expires: Date | undefined;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z-]+)\s*:\s*(.+?)\s*$/.exec(line);
    if (!m) continue;
    const field = m[1]!.toLowerCase();
    if (field === "contact") contacts.push(m[2]!);
    if (field === "expires") {
      const d = new Date(m[2]!);
      if (!Number.isNaN(d.getTime())) expires = d;
    }
  }
  return { contacts, expires };
}

export async function domainChecks(base: URL, policy: SafeFetchPolicy, now: Date): Promise<ScreenCheck[]> {
  const at = now.toISOString();
  const origin = base.origin;
  const source = (path: string) => ({ name: "the domain's own web server", endpoint: `${origin}${path}`, read_at: at });
  const [home, securityTxt, card] = await Promise.all([
    get(`${origin}/`, policy),
    get(`${origin}/.well-known/security.txt`, policy),
    (async () => {
      const current = await get(`${origin}/.well-known/agent-card.json`, policy);
      if (current.ok && current.response.status === 404) {
        const legacy = await get(`${origin}/.well-known/agent.json`, policy);
        if (legacy.ok && legacy.response.status >= 200 && legacy.response.status < 300) return legacy;
      }
      return current;
    })(),
  ]);
  const checks: ScreenCheck[] = [];

  // TLS: judged on the home page request.
  const https = base.protocol === "https:";
  checks.push({
    id: "domain.tls",
    title: "HTTPS with a valid certificate",
    category: "domain",
    weight: "core",
    result: !https ? "fail" : home.ok ? "pass" : isTlsError(home.error) ? "fail" : "warn",
    evidence: !https
      ? `${origin} is served over plain http: no TLS`
      : home.ok
        ? `TLS handshake to ${base.host} completed with a certificate the default CA store accepts`
        : isTlsError(home.error)
          ? `TLS handshake to ${base.host} failed: ${errorText(home.error)}`
          : `no connection to ${base.host} to judge TLS: ${errorText(home.error)}`,
    source: source("/"),
  });

  checks.push({
    id: "domain.reachable",
    title: "Home page reachable",
    category: "domain",
    weight: "core",
    result: !home.ok ? "fail" : home.response.status >= 200 && home.response.status < 300 ? "pass" : "warn",
    evidence: home.ok
      ? `${origin}/ answered ${home.response.status}${home.redirects ? ` after ${home.redirects} redirect(s), at ${home.finalUrl}` : ""}`
      : home.error instanceof UnsafeUrlError
        ? `${origin}/ leads to a non-public address: ${home.error.message}`
        : `${origin}/ did not answer: ${errorText(home.error)}`,
    source: source("/"),
  });

  checks.push(securityTxtCheck(securityTxt, now, source("/.well-known/security.txt")));
  checks.push(cardCheck(card, source(card.ok ? new URL(card.finalUrl).pathname : "/.well-known/agent-card.json")));
  return checks;
}

function securityTxtCheck(f: Fetched, now: Date, source: ScreenCheck["source"]): ScreenCheck {
  const base = { id: "domain.security_txt", title: "security.txt (RFC 9116)", category: "domain" as const, weight: "informational" as const, source };
  if (!f.ok) return { ...base, result: "warn", evidence: `could not be read: ${errorText(f.error)}` };
  if (f.response.status < 200 || f.response.status >= 300) return { ...base, result: "warn", evidence: `absent: /.well-known/security.txt answered ${f.response.status}` };
  if (scanContent(f.response.body).length) return { ...base, result: "fail", evidence: `the file trips the content-trap scan (rules: ${scanContent(f.response.body).join(", ")}); not quoted` };
  const { contacts, expires } = securityTxtFields(f.response.body);
  if (!contacts.length) return { ...base, result: "warn", evidence: "present but has no Contact field" };
  const shown = contacts.slice(0, 3).map((c) => c.slice(0, 200)).join(", ");
  if (!expires) return { ...base, result: "warn", evidence: `Contact ${shown}; no valid Expires field (required by RFC 9116)` };
  if (expires <= now) return { ...base, result: "warn", evidence: `Contact ${shown}; expired on ${expires.toISOString()}` };
  return { ...base, result: "pass", evidence: `Contact ${shown}; expires ${expires.toISOString()}` };
}

function cardCheck(f: Fetched, source: ScreenCheck["source"]): ScreenCheck {
  const base = { id: "domain.a2a_card", title: "A2A agent card", category: "domain" as const, weight: "informational" as const, source };
  if (!f.ok) return { ...base, result: "warn", evidence: `could not be read: ${errorText(f.error)}` };
  if (f.response.status < 200 || f.response.status >= 300) return { ...base, result: "warn", evidence: `absent: /.well-known/agent-card.json answered ${f.response.status}` };
  let doc: unknown;
  try {
    doc = JSON.parse(f.response.body);
  } catch {
    return { ...base, result: "warn", evidence: "present but not JSON" };
  }
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return { ...base, result: "warn", evidence: "present but not a JSON object" };
  const trapped = scanContent(doc);
  if (trapped.length) return { ...base, result: "fail", evidence: `the card trips the content-trap scan (rules: ${trapped.join(", ")}); not quoted` };
  const json = doc as Record<string, unknown>;
  const kind = detectKind(json, "a2a_card");
  const { spec, issues } = schemaIssues(json, kind);
  const name = typeof json.name === "string" ? json.name.slice(0, 120) : "(no name)";
  if (issues.length) return { ...base, result: "warn", evidence: `card "${name}" does not validate as ${spec}: ${issues.slice(0, 3).join("; ")}` };
  return { ...base, result: "pass", evidence: `card "${name}" validates as ${spec}` };
}

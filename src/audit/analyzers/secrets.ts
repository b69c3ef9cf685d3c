import { createHash } from "node:crypto";
import type { Auditor, Hit, RuleDef, Severity } from "../finding.js";

// Auditor 1, hard-coded secrets. Secrets are found when the call's input is parsed, before the job is
// stored: each is replaced in the file's text by a marker, and only its redacted form (kind, first four
// characters when it is 16 characters or longer, length, 12 hex characters of its SHA-256) is kept. So a
// secret reaches neither the job row, nor the report, nor the proof rail, nor a language model.
//
// Rules:
// - secrets.private-key (critical): a PEM private-key block (RSA, EC, DSA, OpenSSH, PGP, PKCS#8).
// - secrets.cloud-credential (critical): a known credential format: AWS access key id (AKIA/ASIA) and
//   secret access key, GitHub tokens (ghp_/gho_/ghu_/ghs_/ghr_/github_pat_), Slack (xox?-), Stripe live
//   keys (sk_live_/rk_live_), OpenAI (sk-/sk-proj-), Anthropic (sk-ant-), Google API keys (AIza),
//   an EVM private key (0x + 64 hex) assigned to a key/secret/wallet name.
// - secrets.jwt (medium): a JSON Web Token (three base64url parts, header and payload starting `eyJ`).
// - secrets.connection-string (high): a URL with an inline password (scheme://user:password@host).
// - secrets.assigned-literal (high): a quoted literal assigned to a name containing key, secret, token,
//   password or credential: any non-placeholder value for password names (8+ characters), otherwise
//   16+ characters with a Shannon entropy of at least 3.5 bits per character that look generated (digits
//   or mixed case, not snake_case/kebab-case words).

export const REDACTION_MARKER = "[REDACTED-SECRET]";

interface Pattern {
  kind: string;
  rule: string;
  re: RegExp;
  /** The capture group holding the secret (0: the whole match). */
  group: number;
  accept?: (value: string, match: RegExpExecArray) => boolean;
}

const PLACEHOLDER = /^(\$\{|\{\{|<|%\(|\$[A-Z_]|process\.env|os\.environ|env\(|x{3,}|\*{3,}|\.{3}|changeme|change_me|change-me|your[_-]|example|dummy|placeholder|redacted|sample|todo|none|null|undefined|password$|secret$|\[REDACTED)/i;
const NOT_A_SECRET_NAME = /(_|-)?(url|uri|path|file|name|type|header|field|endpoint|id|prefix|env|var|key_?id|length|len|count|limit|max|min|ttl|expiry|expires|format|kind|mode|method|algorithm|algo|label|description|hint|placeholder|version|ver|scheme|style|status|state|code|error|message|msg|reason|label)$/i;

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Generated-looking rather than words: digits or mixed case, and not snake/kebab/dotted words. */
const looksRandom = (v: string) => (/\d/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v))) && !/^[a-z][a-z0-9]*(?:[_.:-][a-z0-9]+)+$/i.test(v);

const PATTERNS: Pattern[] = [
  { kind: "private_key", rule: "secrets.private-key", re: /-----BEGIN ((?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END \1?PRIVATE KEY( BLOCK)?-----/g, group: 0 },
  { kind: "aws_secret_access_key", rule: "secrets.cloud-credential", re: /aws_?secret_?(?:access_?)?key\w{0,40}["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi, group: 1 },
  { kind: "aws_access_key_id", rule: "secrets.cloud-credential", re: /\b((?:AKIA|ASIA)[0-9A-Z]{16})\b/g, group: 1 },
  { kind: "github_token", rule: "secrets.cloud-credential", re: /\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b/g, group: 1 },
  { kind: "slack_token", rule: "secrets.cloud-credential", re: /\b(xox[abposr]-[A-Za-z0-9-]{10,250})\b/g, group: 1 },
  { kind: "stripe_secret_key", rule: "secrets.cloud-credential", re: /\b((?:sk|rk)_live_[A-Za-z0-9]{20,247})\b/g, group: 1 },
  { kind: "anthropic_api_key", rule: "secrets.cloud-credential", re: /\b(sk-ant-[A-Za-z0-9_-]{32,})/g, group: 1 },
  { kind: "openai_api_key", rule: "secrets.cloud-credential", re: /\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,})/g, group: 1, accept: (v) => !v.startsWith("sk-ant-") },
  { kind: "google_api_key", rule: "secrets.cloud-credential", re: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/g, group: 1 },
  { kind: "evm_private_key", rule: "secrets.cloud-credential", re: /(?:private_?key|priv_?key|secret|signer|wallet|pk)\w{0,40}["']?\s*[:=]\s*["']?(0x[0-9a-fA-F]{64})(?![0-9a-fA-F])/gi, group: 1 },
  { kind: "jwt", rule: "secrets.jwt", re: /\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/g, group: 1 },
  {
    kind: "connection_string_password",
    rule: "secrets.connection-string",
    re: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/'"`]{1,64}:([^\s@/'"`]{3,128})@[^\s'"`]+/gi,
    group: 1,
    accept: (v) => !PLACEHOLDER.test(v) && !v.includes("${") && !/^[*x]+$/i.test(v),
  },
  {
    kind: "assigned_secret",
    rule: "secrets.assigned-literal",
    re: /\b([A-Za-z0-9_]{0,40}(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|private[_-]?key|access[_-]?key|client[_-]?secret|auth[_-]?key|credential)[A-Za-z0-9_]{0,40})["']?\s{0,8}[:=]\s{0,8}["'`]([^"'`\s]{8,200})["'`]/gi,
    group: 2,
    accept: (v, m) => {
      const name = m[1]!;
      if (NOT_A_SECRET_NAME.test(name) || PLACEHOLDER.test(v) || v.includes("${") || v.includes("://") || /^[./~]/.test(v)) return false;
      if (/passw|pwd/i.test(name)) return true;
      return v.length >= 16 && entropy(v) >= 3.5 && looksRandom(v);
    },
  },
];

const RULE_SEVERITY: Record<string, Severity> = {
  "secrets.private-key": "critical",
  "secrets.cloud-credential": "critical",
  "secrets.connection-string": "high",
  "secrets.assigned-literal": "high",
  "secrets.jwt": "medium",
};

interface Span {
  kind: string;
  rule: string;
  start: number;
  end: number;
}

/** Every secret in `text`, as spans that do not overlap (the earliest, then longest, wins). */
export function detectSecrets(text: string): Span[] {
  const spans: Span[] = [];
  for (const p of PATTERNS) {
    for (const m of text.matchAll(p.re)) {
      const value = m[p.group];
      if (!value || (p.accept && !p.accept(value, m as RegExpExecArray))) continue;
      const start = m.index! + (p.group === 0 ? 0 : m[0].indexOf(value));
      spans.push({ kind: p.kind, rule: p.rule, start, end: start + value.length });
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  for (const s of spans) if (!kept.length || s.start >= kept[kept.length - 1]!.end) kept.push(s);
  return kept;
}

/** The redacted form of a secret: never enough to use it, enough to recognise and rotate it. */
export function redactedForm(value: string): string {
  const digest = createHash("sha256").update(value, "utf8").digest("hex").slice(0, 12);
  const prefix = value.length >= 16 ? `${value.slice(0, 4)}…` : "";
  return `${prefix}(${value.length} chars, sha256:${digest})`;
}

/**
 * `text` with each secret replaced by the marker (its line breaks kept, so line numbers stay right),
 * and what was replaced, in redacted form.
 */
export function redactSecrets(text: string): { text: string; hits: { kind: string; rule: string; line: number; redacted: string }[] } {
  const spans = detectSecrets(text);
  const hits = spans.map((s) => {
    const value = text.slice(s.start, s.end);
    return { kind: s.kind, rule: s.rule, line: text.slice(0, s.start).split("\n").length, redacted: redactedForm(value) };
  });
  let out = text;
  for (const s of [...spans].reverse()) {
    const breaks = text.slice(s.start, s.end).split("\n").length - 1;
    out = out.slice(0, s.start) + REDACTION_MARKER + "\n".repeat(breaks) + out.slice(s.end);
  }
  return { text: out, hits };
}

const RULES: RuleDef[] = [
  { id: "secrets.private-key", severity: "critical", title: "Private key committed in an artifact", detects: "a PEM block -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----", recommendation: "Revoke and rotate the key now (it was transmitted); load keys from a secret manager or a file outside the code." },
  { id: "secrets.cloud-credential", severity: "critical", title: "Live credential in a known format", detects: "AWS (AKIA/ASIA ids, 40-character secret keys), GitHub, Slack, Stripe live, OpenAI, Anthropic and Google API key formats, EVM private keys assigned to key or wallet names", recommendation: "Revoke and rotate the credential; read it from the environment or a secret manager at run time." },
  { id: "secrets.connection-string", severity: "high", title: "Password inside a connection URL", detects: "scheme://user:password@host with a literal password (placeholders and ${…} excluded)", recommendation: "Rotate the password; build the URL from separately injected credentials." },
  { id: "secrets.assigned-literal", severity: "high", title: "Hard-coded secret assigned to a credential name", detects: "a quoted literal assigned to a name containing key, secret, token, password or credential: any value for password names, else 16+ characters with entropy ≥ 3.5 bits/char (placeholders, URLs and paths excluded)", recommendation: "Move the value to the environment or a secret manager and rotate it." },
  { id: "secrets.jwt", severity: "medium", title: "JSON Web Token embedded in an artifact", detects: "eyJ….eyJ….<signature>", recommendation: "Do not ship bearer tokens with code; issue them at run time and keep their lifetime short." },
];

export const secretsAuditor: Auditor = {
  id: "secrets",
  name: "Hard-coded secrets",
  summary: "API keys, private keys, tokens and passwords written into the artifacts (known formats and high-entropy literals)",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    for (const f of view.files) {
      for (const s of f.secrets) {
        const rule = PATTERNS.find((p) => p.kind === s.kind)?.rule ?? "secrets.assigned-literal";
        hits.push({ rule, file: f.index, line: s.line, evidence: `${s.kind} redacted: ${s.redacted}`, severity: RULE_SEVERITY[rule] });
      }
    }
    return hits;
  },
};

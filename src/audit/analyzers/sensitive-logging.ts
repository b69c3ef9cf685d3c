import { callArgs } from "../code-patterns.js";
import type { Auditor, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode } from "../source-file.js";

// Auditor 7, logging of sensitive data: what a logging call's arguments name.
//
// Logging calls: console.log/info/debug/warn/error/trace, logger.<level>, log.<level>, logging.<level>,
// print(…) in Python. Only the arguments' code is read: names and interpolated expressions, not the text of
// string literals (a message saying "authorization expired" logs no authorization).
//
// Rules:
// - logging.credentials (high): arguments naming a password, secret, API key, access/refresh/auth token,
//   bearer, authorization header, private key, mnemonic/seed phrase, credentials or cookies.
// - logging.request-dump (medium): a whole request's headers, body or cookies, or the request object.
// - logging.personal-data (medium): arguments naming national ids, card numbers, security codes, dates of
//   birth or passport numbers.

const LOG_CALL = /\b(?:console\.(?:log|info|debug|warn|error|trace)|(?:logger|log|logging|this\.log|this\.logger)\.(?:info|debug|warn|warning|error|trace|fatal|critical|exception|log)|print)\s*\(/g;
const CREDENTIAL = /\b(?:passw(?:or)?d|passwd|pwd|secret|client_?secret|api_?key|apiKey|token|access_?token|accessToken|refresh_?token|refreshToken|auth_?token|authToken|id_?token|bearer|authorization|private_?key|privateKey|mnemonic|seed_?phrase|seedPhrase|credentials?|cookie|cookies)\b/i;
const DUMP = /\b(?:req|request)\.(?:headers|body|cookies)\b(?!\s*[.[])|JSON\.stringify\(\s*(?:req|request)\s*\)|^\s*(?:req|request)\s*$/;
const PERSONAL = /\b(?:ssn|social_?security(?:_?number)?|national_?id|tax_?id|credit_?card|card_?number|cardNumber|cvv|cvc|date_?of_?birth|dateOfBirth|dob|passport_?(?:number|no))\b/i;

const RULES: RuleDef[] = [
  { id: "logging.credentials", severity: "high", title: "Credentials written to logs", detects: "a logging call whose arguments name a password, secret, API key, token, authorization header, private key, seed phrase, credentials or cookies", recommendation: "Never log credentials; log a key id or a hash prefix at most, and configure the logger to redact these fields." },
  { id: "logging.request-dump", severity: "medium", title: "Whole request logged", detects: "a logging call given req.headers, req.body, req.cookies or the request itself", recommendation: "Log chosen fields only; headers and bodies carry tokens and personal data." },
  { id: "logging.personal-data", severity: "medium", title: "Personal data written to logs", detects: "a logging call whose arguments name national ids, card numbers, security codes, dates of birth or passport numbers", recommendation: "Keep personal data out of logs, or mask it before logging." },
];

export const sensitiveLoggingAuditor: Auditor = {
  id: "sensitive-logging",
  name: "Logging of sensitive data",
  summary: "credentials, whole requests and personal data passed to logging calls",
  rules: RULES,
  analyze(view) {
    return view.files.filter(isCode).flatMap((f) =>
      lineHits(f, (line) => {
        for (const m of line.matchAll(LOG_CALL)) {
          // Names and interpolated expressions, not message text: "authorization expired" is prose.
          const args = codeOf(callArgs(line, m.index! + m[0].length - 1));
          const rule = CREDENTIAL.test(args) ? "logging.credentials" : args.split(",").some((a) => DUMP.test(a.trim())) || DUMP.test(args) ? "logging.request-dump" : PERSONAL.test(args) ? "logging.personal-data" : undefined;
          if (rule) return rule;
        }
        return undefined;
      }),
    );
  },
};

/** `args` with string literals emptied, keeping what template literals interpolate. */
function codeOf(args: string): string {
  return args
    .replace(/\bf(["'])((?:(?!\1)[^\\]|\\.)*)\1/g, (_, _q: string, body: string) => [...body.matchAll(/\{([^}]*)\}/g)].map((m) => ` ${m[1]} `).join(" ") || '""')
    .replace(/`(?:[^`\\]|\\.)*`/g, (t) => [...t.matchAll(/\$\{([^}]*)\}/g)].map((m) => ` ${m[1]} `).join(" ") || '""')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
}

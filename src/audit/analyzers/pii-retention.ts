import type { Auditor, Hit, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode, mentions, type SourceFile } from "../source-file.js";

// Auditor 11, excessive data retention and personal-data handling: what is persisted, and whether the
// file that persists it bounds how long it is kept.
//
// A line persists data when it creates or writes storage: CREATE TABLE, INSERT INTO, @Column/Column(,
// Schema(/model fields, .insert/.save/.upsert(, create/put/set/add on a store, database, collection, cache
// or model, writeFile/appendFile, localStorage.setItem, rpush/lpush/hset. A file bounds retention when it names a retention period, TTL, expiry, purge/delete
// job, anonymisation or encryption of the data.
//
// Rules:
// - pii.card-security-code-stored (high): a card security code (cvv, cvc, card_security_code) persisted
//   at all (PCI DSS forbids storing it after authorization).
// - pii.sensitive-fields-stored (medium): national ids, tax ids, passport or driver licence numbers,
//   dates of birth, card numbers, IBANs or medical data persisted in a file with no retention bound.
// - pii.transcripts-kept (medium): conversations, transcripts, chat logs, message histories or prompts
//   persisted in a file with no retention bound.
// - pii.retention-unbounded (low): a retention, TTL or max-age setting of -1, 0, null, None, Infinity,
//   forever, never or unlimited.

const PERSISTS = /\bCREATE\s+TABLE\b|\bINSERT\s+INTO\b|@Column\b|\bColumn\s*\(|\bSchema\s*\(|\.(?:insert|insertOne|insertMany|save|upsert|hset|rpush|lpush|setItem)\s*\(|\b(?:db|database|collection|table|repo|repository|store|storage|redis|cache|kv|prisma\.\w+|\w*Model|\w*Repository|\w*Collection|\w*Store)\.(?:create|put|set|add)\s*\(|\b(?:writeFile|writeFileSync|appendFile|appendFileSync)\s*\(|\bmodels\.\w+Field\s*\(/;
const RETENTION = /retention|\bttl\b|expire|expiry|expiresAt|expires_at|purge|delete_?after|deleteAfter|max_?age|maxAge|anonymi[sz]|pseudonymi[sz]|encrypt|\bEX\b|setex/i;
const CARD_CODE = /\b(?:cvv2?|cvc2?|card_?security_?code|cardSecurityCode|security_?code)\b/i;
const SENSITIVE = /\b(?:ssn|social_?security(?:_?number)?|national_?id|nationalId|tax_?id|taxId|passport_?(?:number|no)|passportNumber|driver_?licen[cs]e|driverLicen[cs]e|date_?of_?birth|dateOfBirth|dob|card_?number|cardNumber|credit_?card|creditCard|iban|medical|diagnosis|health_?record)\b/i;
const TRANSCRIPT = /\b(?:conversations?|transcripts?|chat_?logs?|chatLogs?|chat_?history|chatHistory|message_?history|messageHistory|messages|history|prompts?)\b/i;
const UNBOUNDED = /["']?\b(?:retention(?:_?days|Days|_?period|Period)?|ttl|max_?age|maxAge)\b["']?\s*[:=]\s*(?:-1|0|null|None|Infinity|["']?(?:forever|never|unlimited|infinite)["']?)(?![\w.])/i;

const RULES: RuleDef[] = [
  { id: "pii.card-security-code-stored", severity: "high", title: "Card security code persisted", detects: "cvv/cvc/card security code in a storage write or schema", recommendation: "Never store card security codes; use a PCI-compliant payment processor's tokens." },
  { id: "pii.sensitive-fields-stored", severity: "medium", title: "Sensitive personal data stored without a retention bound", detects: "national/tax ids, passport or licence numbers, dates of birth, card numbers, IBANs or medical data persisted in a file that names no retention, TTL, purge, anonymisation or encryption", recommendation: "Collect only what the task needs, encrypt it at rest, and delete it on a stated schedule." },
  { id: "pii.transcripts-kept", severity: "medium", title: "Conversations or prompts stored without a retention bound", detects: "conversations, transcripts, chat logs, message histories or prompts persisted in a file that names no retention bound", recommendation: "Set and enforce a retention period for transcripts; strip personal data and secrets before storing them." },
  { id: "pii.retention-unbounded", severity: "low", title: "Retention explicitly unbounded", detects: "a retention/TTL/max-age setting of -1, 0, null, Infinity, forever, never or unlimited", recommendation: "Choose a finite retention period and document it." },
];

function scan(f: SourceFile): Hit[] {
  const bounded = mentions(f, RETENTION);
  let inTable = false;
  return lineHits(f, (line) => {
    const unbounded = UNBOUNDED.test(line) && "pii.retention-unbounded";
    // The column lines of a CREATE TABLE statement define what is stored.
    const column = inTable;
    if (/\bCREATE\s+TABLE\b/i.test(line)) inTable = !/\)\s*;/.test(line);
    else if (inTable && /^\s*\)/.test(line)) inTable = false;
    if (!column && !PERSISTS.test(line) && !/^\s*["']?\w+["']?\s*[:=]\s*(?:\{\s*type\s*:|Column|String\b|Text\b|Integer\b|models\.|DataTypes\.)/.test(line)) return unbounded;
    const stored = CARD_CODE.test(line)
      ? "pii.card-security-code-stored"
      : !bounded && SENSITIVE.test(line)
        ? "pii.sensitive-fields-stored"
        : !bounded && PERSISTS.test(line) && TRANSCRIPT.test(line) && "pii.transcripts-kept";
    return [unbounded, stored];
  });
}

export const piiRetentionAuditor: Auditor = {
  id: "pii-retention",
  name: "Excessive data retention and PII handling",
  summary: "personal data, card security codes and conversation transcripts stored without a retention bound",
  rules: RULES,
  analyze(view) {
    return view.files.filter((f) => isCode(f) || f.language === "yaml" || f.language === "json" || /\.sql$/i.test(f.name)).flatMap(scan);
  },
};

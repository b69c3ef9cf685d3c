import { createHash } from "node:crypto";
import { z } from "zod";
import { scanContent } from "../trust/content-scan.js";
import { SkuRefusal } from "../skus/sku-handler.js";
import { redactSecrets } from "./analyzers/secrets.js";
import { SEVERITIES } from "./finding.js";
import { languageOf, type SuppliedFile } from "./source-file.js";

// The audit subject payload (spec: "Audit subject payload"), shared by security.enterprise-audit and
// security.multi-agent-audit:
//   { target, owner, scope: "full", evidence_class,
//     subject: { agent_id, name?, declared_capabilities: [..], artifacts: { "<path>": <file> }, declared_findings? } }
// A file is its text, or { content, encoding: "utf8" | "base64", sha256? }, or { sha256 } alone (a manifest
// entry). Paths are reduced to their basename before anything else sees them.
//
// Parsing does the privacy work, because the parsed input is what the job row stores: base64 is decoded,
// each file is hashed over the bytes sent, secrets are detected and replaced in the text (only their
// redacted form is kept), and content the evidence class does not examine (a notarized manifest, binary
// files) is dropped after hashing. So no secret, and no content that is not audited, is stored at rest.

export const EVIDENCE_CLASSES = ["self_declared", "notarized_manifest", "observed_artifacts", "local_disk"] as const;
export type EvidenceClass = (typeof EVIDENCE_CLASSES)[number];

const MAX_FILES = 500;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_TOTAL_BYTES = 8 * 1024 * 1024;
const Hex64 = z.string().regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex characters");
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

const FileValue = z.union([
  z.string().max(MAX_FILE_BYTES * 2),
  z
    .object({
      content: z.string().max(MAX_FILE_BYTES * 2).optional(),
      encoding: z.enum(["utf8", "base64"]).default("utf8"),
      sha256: Hex64.optional(),
    })
    .strict()
    .refine((f) => f.content !== undefined || f.sha256 !== undefined, "give the file's content, or its sha256 for a manifest entry")
    .refine((f) => f.encoding !== "base64" || f.content === undefined || BASE64.test(f.content), { message: "content is not valid base64", path: ["content"] }),
]);

const DeclaredFinding = z
  .object({
    severity: z.enum(SEVERITIES),
    title: z.string().trim().min(1).max(200),
    file: z.string().trim().min(1).max(1024).optional(),
    detail: z.string().trim().max(1000).optional(),
  })
  .strict();

const Name = z.string().trim().min(1).max(160);

const SubjectPayload = z
  .object({
    agent_id: Name,
    name: Name.optional(),
    declared_capabilities: z.array(z.string().trim().min(1).max(200)).max(200).default([]),
    artifacts: z
      .record(z.string().min(1).max(1024), FileValue)
      .refine((a) => Object.keys(a).length <= MAX_FILES, `at most ${MAX_FILES} files`)
      .optional(),
    declared_findings: z.array(DeclaredFinding).max(100).default([]),
  })
  .loose();

export const basename = (path: string) =>
  path
    .split(/[/\\]+/)
    .filter((s) => s !== "")
    .pop() ?? "";

type RawFile = z.infer<typeof FileValue>;

function bytesOf(f: RawFile): Buffer | undefined {
  if (typeof f === "string") return Buffer.from(f, "utf8");
  if (f.content === undefined) return undefined;
  return f.encoding === "base64" ? Buffer.from(f.content.replace(/\s+/g, ""), "base64") : Buffer.from(f.content, "utf8");
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

function utf8Text(b: Buffer): string | undefined {
  if (b.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(b);
  } catch {
    return undefined;
  }
}

type RawInput = {
  target?: string;
  owner?: string;
  scope: "full";
  evidence_class?: EvidenceClass;
  subject?: string | z.infer<typeof SubjectPayload>;
  task?: string;
};

function inferredClass(s: z.infer<typeof SubjectPayload>): EvidenceClass {
  const files = Object.values(s.artifacts ?? {});
  if (files.some((f) => typeof f === "string" || f.content !== undefined)) return "observed_artifacts";
  return files.length ? "notarized_manifest" : "self_declared";
}

/** Checks the payload's coherence with its evidence class (each problem a 400 naming its field). */
function checkPayload(i: RawInput, ctx: z.RefinementCtx): void {
  if (i.target === undefined && i.subject === undefined && i.task === undefined) {
    ctx.addIssue({ code: "custom", message: "name the agent to audit (target) and send its subject payload", path: ["target"] });
    return;
  }
  if (!i.subject || typeof i.subject === "string") return;
  const s = i.subject;
  const entries = Object.entries(s.artifacts ?? {});
  // Nothing to audit and no class claimed: like a bare name, the precheck answers insufficient_subject.
  if (!entries.length && !s.declared_capabilities.length && i.evidence_class === undefined) return;
  const cls = i.evidence_class ?? inferredClass(s);
  let total = 0;
  for (const [path, f] of entries) {
    const at = ["subject", "artifacts", path];
    const name = basename(path);
    if (name === "" || name === "." || name === "..") ctx.addIssue({ code: "custom", message: "the path has no file name", path: at });
    const bytes = bytesOf(f);
    if (bytes && bytes.length > MAX_FILE_BYTES) ctx.addIssue({ code: "custom", message: `a file may hold at most ${MAX_FILE_BYTES} bytes`, path: at });
    total += bytes?.length ?? 0;
    if (bytes && typeof f !== "string" && f.sha256 && f.sha256.toLowerCase() !== sha256(bytes)) {
      ctx.addIssue({ code: "custom", message: "does not match the SHA-256 of the content sent", path: [...at, "sha256"] });
    }
  }
  if (total > MAX_TOTAL_BYTES) ctx.addIssue({ code: "custom", message: `the artifacts may hold at most ${MAX_TOTAL_BYTES} bytes in all`, path: ["subject", "artifacts"] });
  if (cls === "self_declared") {
    if (entries.length) ctx.addIssue({ code: "custom", message: "self_declared is a capability list: send artifacts under notarized_manifest or observed_artifacts", path: ["subject", "artifacts"] });
    if (!s.declared_capabilities.length) ctx.addIssue({ code: "custom", message: "self_declared needs the declared capabilities", path: ["subject", "declared_capabilities"] });
  }
  if (cls === "notarized_manifest" && !entries.length) ctx.addIssue({ code: "custom", message: "notarized_manifest needs the artifacts' file names and sha256", path: ["subject", "artifacts"] });
  if (cls === "observed_artifacts" && !entries.some(([, f]) => bytesOf(f) !== undefined)) {
    ctx.addIssue({ code: "custom", message: "observed_artifacts needs the content of at least one file", path: ["subject", "artifacts"] });
  }
}

/** The file as stored: hashed, its secrets redacted, its content kept only when the class examines it. */
function supplied(path: string, f: RawFile, cls: EvidenceClass): SuppliedFile {
  const name = basename(path);
  const language = languageOf(name);
  const bytes = bytesOf(f);
  if (!bytes) return { name, sha256: (f as { sha256: string }).sha256.toLowerCase(), bytes: null, language, examined: false, not_examined: "hash only: no content was supplied", text: null, secrets: [] };
  const base = { name, sha256: sha256(bytes), bytes: bytes.length, language };
  if (cls !== "observed_artifacts") return { ...base, examined: false, not_examined: `${cls}: content is hashed, not examined (and not kept)`, text: null, secrets: [] };
  const text = utf8Text(bytes);
  if (text === undefined) return { ...base, examined: false, not_examined: "binary content: hashed, not examined", text: null, secrets: [] };
  const redacted = redactSecrets(text);
  return { ...base, examined: true, not_examined: null, text: redacted.text, secrets: redacted.hits.map(({ kind, line, redacted: r }) => ({ kind, line, redacted: r })) };
}

export interface DeclaredFindingInput {
  severity: (typeof SEVERITIES)[number];
  title: string;
  file: string | null;
  detail: string | null;
}

/** The parsed call: what the engines, the precheck and the job row see. */
export interface AuditInput {
  target: string | null;
  owner: string | null;
  scope: "full";
  /** Set when the call named an agent but sent no subject payload (a bare name or passport URL). */
  bare: string | null;
  evidence_class: EvidenceClass | null;
  evidence_class_source: "declared" | "inferred";
  agent_id: string | null;
  agent_name: string | null;
  declared_capabilities: string[];
  files: SuppliedFile[];
  declared_findings: DeclaredFindingInput[];
}

function prepare(i: RawInput): AuditInput {
  const common = { target: i.target ?? null, owner: i.owner ?? null, scope: i.scope, evidence_class_source: i.evidence_class ? ("declared" as const) : ("inferred" as const) };
  if (!i.subject || typeof i.subject === "string") {
    const bare = (typeof i.subject === "string" ? i.subject : undefined) ?? i.target ?? i.task ?? "";
    return { ...common, bare, evidence_class: i.evidence_class ?? null, agent_id: null, agent_name: null, declared_capabilities: [], files: [], declared_findings: [] };
  }
  const s = i.subject;
  const cls = i.evidence_class ?? inferredClass(s);
  return {
    ...common,
    target: i.target ?? s.name ?? s.agent_id,
    bare: null,
    evidence_class: cls,
    agent_id: s.agent_id,
    agent_name: s.name ?? null,
    declared_capabilities: s.declared_capabilities,
    files: cls === "local_disk" ? [] : Object.entries(s.artifacts ?? {}).map(([path, f]) => supplied(path, f, cls)),
    declared_findings: s.declared_findings.map((d) => ({ severity: d.severity, title: d.title, file: d.file === undefined ? null : basename(d.file), detail: d.detail ?? null })),
  };
}

export const AuditSubjectInput = z
  .object({
    target: Name.optional(),
    owner: Name.optional(),
    scope: z.literal("full").default("full"),
    evidence_class: z.enum(EVIDENCE_CLASSES).optional(),
    subject: z.union([z.string().trim().min(1).max(2048), SubjectPayload]).optional(),
    task: z.string().trim().min(1).max(4000).optional(),
  })
  .loose()
  .superRefine((i, ctx) => checkPayload(i as RawInput, ctx))
  .transform((i) => prepare(i as RawInput));

/**
 * Before any charge: the subject's declared fields are content-trap scanned (the artifacts are the code
 * under audit and are not: an injection pattern in them is a finding, not a refusal); `local_disk` is
 * refused (this deployment hosts no agents); a bare name or passport URL is `insufficient_subject`.
 */
export function precheckAuditSubject(i: AuditInput, skuId: string): string | undefined {
  const declared = [i.target, i.owner, i.bare, i.agent_id, i.agent_name, ...i.declared_capabilities, ...i.declared_findings.flatMap((d) => [d.title, d.detail])];
  const trapped = scanContent(declared.filter((v): v is string => typeof v === "string"));
  if (trapped.length) throw new SkuRefusal("content_trap", `the audit subject's declared fields match content-trap rule${trapped.length > 1 ? "s" : ""} ${trapped.join(", ")}`);
  if (i.evidence_class === "local_disk") {
    throw new SkuRefusal("evidence_class_unavailable", `evidence_class local_disk audits an agent this service hosts, from its own disk; this deployment hosts no agents, so send the files as observed_artifacts (or hashes as notarized_manifest) instead`);
  }
  if (i.bare !== null) {
    const what = /^https?:\/\//i.test(i.bare) ? "a passport URL" : "a bare name";
    return `${skuId} needs a subject payload (subject.agent_id with declared_capabilities and/or artifacts, and an evidence_class); ${what} alone cannot be audited`;
  }
  if (!i.declared_capabilities.length && !i.files.length) return `${skuId}: the subject payload has neither declared capabilities nor artifacts: there is nothing to audit`;
  return undefined;
}

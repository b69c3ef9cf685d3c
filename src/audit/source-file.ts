import { z } from "zod";

// A supplied artifact as the auditors read it. The stored form (`SuppliedFile`, part of the parsed call
// input, hence of the job row) holds only the basename, the SHA-256 of the bytes sent, and the text with
// every detected secret already replaced; the run-time view adds its lines, with comment-only lines
// blanked so a rule does not fire on prose about the pattern it looks for.

export const LANGUAGES = ["javascript", "python", "shell", "dockerfile", "json", "yaml", "toml", "requirements", "env", "markdown", "text", "other"] as const;
export type Language = (typeof LANGUAGES)[number];

export const SecretHitSchema = z.object({
  kind: z.string(),
  line: z.number(),
  /** The redacted form: first 4 characters (only for secrets of 16 characters or more), length, SHA-256 prefix. */
  redacted: z.string(),
});
export type SecretHit = z.infer<typeof SecretHitSchema>;

export interface SuppliedFile {
  name: string;
  sha256: string;
  /** Size of the bytes sent; null when only a hash was supplied. */
  bytes: number | null;
  language: Language;
  examined: boolean;
  /** Why the file was not read (hash only, binary, evidence class). */
  not_examined: string | null;
  /** The redacted text of an examined file. */
  text: string | null;
  secrets: SecretHit[];
}

export interface SourceFile {
  index: number;
  name: string;
  sha256: string;
  language: Language;
  text: string;
  /** The redacted lines, 0-based (line n of the file is lines[n - 1]), each cut at MAX_LINE_CHARS. */
  lines: string[];
  /** The same lines with comment-only lines blanked. */
  code: string[];
  secrets: SecretHit[];
}

export function languageOf(name: string): Language {
  const n = name.toLowerCase();
  if (/\.(m|c)?(j|t)sx?$/.test(n)) return "javascript";
  if (n.endsWith(".py")) return "python";
  if (/\.(sh|bash|zsh)$/.test(n)) return "shell";
  if (n === "dockerfile" || n.endsWith(".dockerfile")) return "dockerfile";
  if (/^requirements.*\.txt$/.test(n)) return "requirements";
  if (/\.jsonc?$/.test(n)) return "json";
  if (/\.ya?ml$/.test(n)) return "yaml";
  if (n.endsWith(".toml")) return "toml";
  if (n === ".env" || n.endsWith(".env") || n.startsWith(".env.")) return "env";
  if (/\.(md|markdown|mdx)$/.test(n)) return "markdown";
  if (/\.(txt|prompt|tmpl|j2|jinja)$/.test(n)) return "text";
  return "other";
}

/** Program source the code rules read. */
export const isCode = (f: SourceFile) => f.language === "javascript" || f.language === "python";
/** Configuration and manifests (tool grants, scopes, flags). */
export const isConfig = (f: SourceFile) => ["json", "yaml", "toml", "env", "dockerfile", "shell"].includes(f.language);

const HASH_COMMENT: Language[] = ["python", "shell", "dockerfile", "yaml", "toml", "requirements", "env"];

function blankComments(lines: string[], language: Language): string[] {
  if (HASH_COMMENT.includes(language)) return lines.map((l) => (l.trimStart().startsWith("#") ? "" : l));
  if (language !== "javascript") return lines;
  let inBlock = false;
  return lines.map((l) => {
    const t = l.trimStart();
    if (inBlock) {
      if (l.includes("*/")) inBlock = false;
      return "";
    }
    if (t.startsWith("//")) return "";
    if (t.startsWith("/*")) {
      inBlock = !t.slice(2).includes("*/");
      return "";
    }
    return l;
  });
}

/** Longer lines (minified code, blobs) are read up to this length: it bounds every rule's work per line. */
export const MAX_LINE_CHARS = 4000;

export function sourceFile(f: SuppliedFile, index: number): SourceFile {
  const text = f.text ?? "";
  const lines = text.split(/\r?\n/).map((l) => (l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l));
  return { index, name: f.name, sha256: f.sha256, language: f.language, text, lines, code: blankComments(lines, f.language), secrets: f.secrets };
}

/** Whether any code line of `f` matches `re` (a non-global pattern). */
export const mentions = (f: SourceFile, re: RegExp) => f.code.some((l) => re.test(l));

import { readFileSync } from "node:fs";
import { excerpt, type Auditor, type Hit, type RuleDef } from "../finding.js";
import type { SourceFile } from "../source-file.js";

// Auditor 5, dependency risks, over npm manifests (package.json), npm lockfiles (package-lock.json)
// and pip requirements files (requirements*.txt).
//
// Rules:
// - deps.known-bad-package (critical): a dependency named in the shipped list of packages withdrawn
//   after malware or compromise incidents (src/audit/data/known-bad-packages.json); an entry with
//   versions matches a manifest's exact pin or a lockfile's resolved version only.
// - deps.unpinned-version (medium): an npm dependency on "*", "latest", "", "x", a dist-tag, an open
//   range (">=1", ">1") or a git/http(s) source without a commit hash; a requirements line without "==".
// - deps.install-script (medium): a preinstall, install or postinstall script in package.json; high
//   when the script downloads or runs remote or inline code (curl, wget, | sh, bash -c, node -e, python -c).

interface BadPackage {
  ecosystem: "npm" | "pypi";
  name: string;
  versions?: string[];
  incident: string;
}

const DATA = JSON.parse(readFileSync(new URL("../data/known-bad-packages.json", import.meta.url), "utf8")) as { packages: BadPackage[] };
const pypiName = (n: string) => n.toLowerCase().replace(/[-_.]+/g, "-");
const BAD_NPM = new Map(DATA.packages.filter((p) => p.ecosystem === "npm").map((p) => [p.name, p]));
const BAD_PYPI = new Map(DATA.packages.filter((p) => p.ecosystem === "pypi").map((p) => [pypiName(p.name), p]));

const DEP_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];
const INSTALL_HOOKS = ["preinstall", "install", "postinstall"];
const REMOTE_CODE = /\b(?:curl|wget|iwr|Invoke-WebRequest)\b|\|\s*(?:ba)?sh\b|\bbash\s+-c\b|\bsh\s+-c\b|\bnode\s+-e\b|\bpython3?\s+-c\b|\beval\b/;

const RULES: RuleDef[] = [
  { id: "deps.known-bad-package", severity: "critical", title: "Known-malicious or compromised package", detects: `a dependency on the shipped list of ${DATA.packages.length} packages withdrawn after malware or compromise incidents (exact versions for hijacked releases)`, recommendation: "Remove the package (or move off the compromised version), rotate any secret the install could read, and rebuild from a clean lockfile." },
  { id: "deps.unpinned-version", severity: "medium", title: "Unpinned dependency", detects: "npm: *, latest, empty, x, dist-tags, open ranges, git/http sources without a commit; pip: requirement lines without ==", recommendation: "Pin exact versions (or bounded ranges with a committed lockfile) and git sources to a commit hash." },
  { id: "deps.install-script", severity: "medium", title: "Install-time script", detects: "preinstall/install/postinstall scripts in package.json (high when they fetch or run remote or inline code)", recommendation: "Avoid install hooks; install with --ignore-scripts and run any build step explicitly and reviewed." },
];

/** The 1-based line of the first line containing `needle`, searching from `from`. */
function lineOf(f: SourceFile, needle: string, from = 0): number | undefined {
  const i = f.lines.findIndex((l, n) => n >= from && l.includes(needle));
  return i >= 0 ? i + 1 : undefined;
}

function unpinnedNpm(spec: string): boolean {
  const s = spec.trim();
  if (s === "" || s === "*" || s === "x" || s === "latest" || s === "next") return true;
  if (/^(?:git\+|git:|github:|https?:)/.test(s) || /^[\w.-]+\/[\w.-]+(?:#.*)?$/.test(s)) return !/#[0-9a-f]{40}$/.test(s);
  if (/^(?:file:|link:|workspace:|npm:)/.test(s)) return false;
  if (/^[a-z][\w-]*$/i.test(s)) return true; // a dist-tag
  return /^>=?\s*[\dv]/.test(s) && !/<|\s-\s/.test(s);
}

const exactVersion = (spec: string) => spec.trim().replace(/^[=v]+/, "");

function packageJson(f: SourceFile): Hit[] {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(f.text) as Record<string, unknown>;
  } catch {
    return [];
  }
  const hits: Hit[] = [];
  for (const field of DEP_FIELDS) {
    const deps = doc[field];
    if (!deps || typeof deps !== "object") continue;
    const from = (lineOf(f, `"${field}"`) ?? 1) - 1;
    for (const [name, raw] of Object.entries(deps as Record<string, unknown>)) {
      const spec = String(raw);
      const line = lineOf(f, `"${name}"`, from);
      const evidence = `${field}: "${name}": "${spec}"`;
      const bad = BAD_NPM.get(name);
      if (bad && (!bad.versions || bad.versions.includes(exactVersion(spec)))) hits.push({ rule: "deps.known-bad-package", file: f.index, line, evidence: `${evidence} — ${bad.incident}` });
      if (unpinnedNpm(spec)) hits.push({ rule: "deps.unpinned-version", file: f.index, line, evidence });
    }
  }
  const scripts = doc.scripts && typeof doc.scripts === "object" ? (doc.scripts as Record<string, unknown>) : {};
  for (const hook of INSTALL_HOOKS) {
    if (typeof scripts[hook] !== "string") continue;
    const script = scripts[hook] as string;
    const line = lineOf(f, `"${hook}"`);
    hits.push({ rule: "deps.install-script", file: f.index, line, evidence: excerpt(`"${hook}": "${script}"`), severity: REMOTE_CODE.test(script) ? "high" : undefined });
  }
  return hits;
}

function packageLock(f: SourceFile): Hit[] {
  let doc: { packages?: Record<string, { version?: string }>; dependencies?: Record<string, { version?: string }> };
  try {
    doc = JSON.parse(f.text);
  } catch {
    return [];
  }
  const resolved: [string, string][] = [];
  for (const [path, p] of Object.entries(doc.packages ?? {})) if (path.includes("node_modules/") && p?.version) resolved.push([path.slice(path.lastIndexOf("node_modules/") + 13), p.version]);
  for (const [name, p] of Object.entries(doc.dependencies ?? {})) if (p?.version) resolved.push([name, p.version]);
  const hits: Hit[] = [];
  const seen = new Set<string>();
  for (const [name, version] of resolved) {
    const bad = BAD_NPM.get(name);
    if (!bad || (bad.versions && !bad.versions.includes(version)) || seen.has(`${name}@${version}`)) continue;
    seen.add(`${name}@${version}`);
    hits.push({ rule: "deps.known-bad-package", file: f.index, line: lineOf(f, `node_modules/${name}"`) ?? lineOf(f, `"${name}"`), evidence: `resolved ${name}@${version} — ${bad.incident}` });
  }
  return hits;
}

function requirements(f: SourceFile): Hit[] {
  const hits: Hit[] = [];
  f.code.forEach((raw, i) => {
    const line = raw.replace(/\s+#.*$/, "").trim();
    if (!line || line.startsWith("-")) return;
    const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$/.exec(line);
    if (!m) return;
    const [, name, , constraint] = m;
    const at = { file: f.index, line: i + 1, evidence: excerpt(raw) };
    const bad = BAD_PYPI.get(pypiName(name!));
    const pinned = /^==\s*([^\s,;]+)/.exec(constraint!.trim());
    if (bad && (!bad.versions || (pinned && bad.versions.includes(pinned[1]!)))) hits.push({ rule: "deps.known-bad-package", ...at, evidence: `${excerpt(raw)} — ${bad.incident}` });
    if (!pinned && !/@\s*\S+#?[0-9a-f]{40}/.test(constraint!)) hits.push({ rule: "deps.unpinned-version", ...at });
  });
  return hits;
}

export const dependenciesAuditor: Auditor = {
  id: "dependencies",
  name: "Dependency risks",
  summary: "unpinned versions, install-time scripts, known-malicious or compromised packages (list shipped as data)",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    for (const f of view.files) {
      const n = f.name.toLowerCase();
      if (n === "package.json") hits.push(...packageJson(f));
      else if (n === "package-lock.json" || n === "npm-shrinkwrap.json") hits.push(...packageLock(f));
      else if (f.language === "requirements") hits.push(...requirements(f));
    }
    return hits;
  },
};

import { excerpt, type Auditor, type Hit, type RuleDef } from "../finding.js";
import { DEFINES_TOOLS } from "../code-patterns.js";
import { lineHits } from "../line-hits.js";
import { isCode, isConfig, mentions, type SourceFile } from "../source-file.js";

// Auditor 3, over-broad tools and permissions: grants wider than any one task needs.
//
// Rules:
// - permissions.wildcard-scope (high): a permission, scope, allowed-tools, capability, action, resource or
//   grant list in a manifest or in code that contains "*" or a `<name>:*` / `*:*` wildcard.
// - permissions.privileged-execution (high): sudo in a command, a privileged container
//   (`privileged: true`, `--privileged`), a Dockerfile that stays `USER root`.
// - permissions.unrestricted-filesystem (high): an allowed-paths/roots/workspace setting of "/", "~",
//   "/*" or "**", Deno's --allow-all/-A, or a flag that switches a sandbox or permission prompt off
//   (--dangerously-skip-permissions, dangerouslyDisableSandbox, sandbox: false).
// - permissions.shell-tool (high): in a file that defines tools, a tool whose name says it runs shell
//   commands (shell, bash, sh, exec, execute, run_command, execute_command, run_shell, terminal, cmd, powershell).
// - permissions.declared-wildcard (high, from the declaration): a declared capability that is "*",
//   "all", "admin", "root" or ends in ":*".
// - permissions.declared-shell (medium, from the declaration): a declared capability granting shell or
//   arbitrary code execution (shell, exec, sudo, code-execution…).

const GRANT_KEY = /["']?\b(?:permissions?|scopes?|allowed_?tools|allowedTools|tools_?allowed|capabilities|actions|resources|grants?|roles)\b["']?\s*[:=]/i;
const WILDCARD_VALUE = /["']\s*(?:\*|[\w.-]+:\*|\*:\*|\*\.\*)\s*["']/;
const SUDO = /(?:^|[\s"'`;&|(])sudo\s+[-\w]/;
const PRIVILEGED = /["']?\bprivileged["']?\s*[:=]\s*true\b|--privileged\b/i;
const WIDE_FS = /(?:["']?\b(?:allowed_?(?:paths|dirs|directories|roots)|allowedPaths|allowedDirectories|roots?|fs_?scope|workspace(?:_?root)?|read_?paths|write_?paths)\b["']?\s*[:=]\s*\[?\s*["'](?:\/|~|\/\*+|\*\*(?:\/\*)?)["'])|--allow-all\b|\bdeno\s+run\s+(?:[^\n]{0,300}\s)?-A\b|--dangerously-skip-permissions\b|\bdangerouslyDisableSandbox\b|["']?\bsandbox["']?\s*[:=]\s*(?:false|False)\b/;
const SHELL_TOOL = /["']?\bname["']?\s*[:=]\s*["'](shell|bash|sh|exec|execute|run_?command|execute_?command|run_?shell|shell_?exec|terminal|cmd|powershell)["']/i;
const DECLARED_WILDCARD = /^(?:\*|all|admin|root|superuser|.*:\*)$/i;
const DECLARED_SHELL = /\b(?:shell|bash|exec|execute|sudo|code[-_ ]?execution|run[-_ ]?code|terminal|subprocess)\b/i;

const RULES: RuleDef[] = [
  { id: "permissions.wildcard-scope", severity: "high", title: "Wildcard permission or scope", detects: "a permissions/scopes/allowed-tools/capabilities/actions/resources/grants list containing \"*\" or \"<name>:*\"", recommendation: "List the exact scopes and tools each task needs; deny everything else by default." },
  { id: "permissions.privileged-execution", severity: "high", title: "Privileged execution (sudo, privileged container, root user)", detects: "sudo in a command, privileged: true / --privileged, a Dockerfile whose last USER is root", recommendation: "Run the agent as an unprivileged user in an unprivileged container; grant specific capabilities only." },
  { id: "permissions.unrestricted-filesystem", severity: "high", title: "Unrestricted filesystem access or sandbox disabled", detects: "allowed paths/roots of /, ~, /* or **, deno --allow-all/-A, --dangerously-skip-permissions, dangerouslyDisableSandbox, sandbox: false", recommendation: "Confine file access to a dedicated working directory and keep the sandbox and permission prompts on." },
  { id: "permissions.shell-tool", severity: "high", title: "Shell-execution tool exposed to the model", detects: "a tool named shell, bash, exec, run_command, terminal, … in a tool definition", recommendation: "Replace a general shell with narrow tools (fixed commands, validated arguments), or run it in a disposable sandbox with human approval." },
  { id: "permissions.declared-wildcard", severity: "high", title: "Wildcard capability declared", detects: "a declared capability of *, all, admin, root or <name>:*", recommendation: "Declare the specific capabilities the agent uses." },
  { id: "permissions.declared-shell", severity: "medium", title: "Shell or code execution declared as a capability", detects: "a declared capability naming shell, exec, sudo or code execution", recommendation: "Scope execution to a sandbox and say so in the declaration (what runs, where, with what limits)." },
];

function dockerRoot(f: SourceFile): Hit | undefined {
  let last: { line: number; text: string } | undefined;
  f.code.forEach((l, i) => {
    if (/^\s*USER\s+\S+/i.test(l)) last = { line: i + 1, text: l };
  });
  return last && /^\s*USER\s+(root|0)(\s|:|$)/i.test(last.text) ? { rule: "permissions.privileged-execution", file: f.index, line: last.line, evidence: excerpt(last.text) } : undefined;
}

/** A wildcard inside a grant list that spans lines: the key's line, then the next lines up to the list's end. */
function wildcardGrants(f: SourceFile): Hit[] {
  const hits: Hit[] = [];
  f.code.forEach((line, i) => {
    if (!GRANT_KEY.test(line)) return;
    const opensList = /[:=]\s*[[(]?\s*$/.test(line) || (/[[(]/.test(line) && !/[\])]/.test(line.slice(line.search(/[[(]/))));
    const window = opensList ? f.code.slice(i, i + 20) : [line];
    for (let j = 0; j < window.length; j++) {
      if (WILDCARD_VALUE.test(window[j]!) || (f.language === "yaml" && j > 0 && /^\s*-\s*["']?\*["']?\s*$/.test(window[j]!))) {
        hits.push({ rule: "permissions.wildcard-scope", file: f.index, line: i + 1 + j, evidence: excerpt(j === 0 ? line : `${line.trim()} … ${window[j]!.trim()}`) });
        return;
      }
      if (j > 0 && /[\])]/.test(window[j]!)) return;
    }
  });
  return hits;
}

export const toolPermissionsAuditor: Auditor = {
  id: "tool-permissions",
  name: "Over-broad tools and permissions",
  summary: "shell execution tools, wildcard file access, sudo and privileged containers, * scopes in manifests",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    for (const f of view.files.filter((f) => isCode(f) || isConfig(f))) {
      hits.push(...wildcardGrants(f));
      const tools = mentions(f, DEFINES_TOOLS);
      hits.push(
        ...lineHits(f, (line) => [
          (SUDO.test(line) || PRIVILEGED.test(line)) && "permissions.privileged-execution",
          WIDE_FS.test(line) && "permissions.unrestricted-filesystem",
          tools && SHELL_TOOL.test(line) && "permissions.shell-tool",
        ]),
      );
      if (f.language === "dockerfile") {
        const root = dockerRoot(f);
        if (root) hits.push(root);
      }
    }
    for (const c of view.declaredCapabilities) {
      if (DECLARED_WILDCARD.test(c.trim())) hits.push({ rule: "permissions.declared-wildcard", evidence: `declared capability "${c}"`, basis: "declared" });
      else if (DECLARED_SHELL.test(c)) hits.push({ rule: "permissions.declared-shell", evidence: `declared capability "${c}"`, basis: "declared" });
    }
    return hits;
  },
};

import { buildsString, callArgs, taintedNames, untrusted } from "../code-patterns.js";
import type { Auditor, RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode } from "../source-file.js";

// Auditor 9, SQL and command injection: queries and shell commands assembled from strings.
//
// Rules:
// - injection.sql-string-built (high): a SQL statement (SELECT … FROM, INSERT INTO, UPDATE … SET,
//   DELETE FROM, DROP TABLE, … WHERE x =/LIKE/IN) in a string built from a non-constant part (`${x}`,
//   f"{x}", concatenation, % or .format), or an unsafe raw-query API ($queryRawUnsafe, $executeRawUnsafe)
//   given a built string.
// - injection.command-built (high): a shell command run through exec/execSync/child_process.exec,
//   spawn/spawnSync/execFile with shell: true, os.system, os.popen or subprocess with shell=True, whose
//   command is built from a non-constant part or is request data (or a name assigned from it).

const SQL = /\bSELECT\b[^;]{1,300}?\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+[\w."`]{1,64}\s+SET\b|\bDELETE\s+FROM\b|\bDROP\s+TABLE\b|\bALTER\s+TABLE\b|\bWHERE\s+[\w."`]{1,64}\s*(?:=|LIKE\b|IN\b|<|>)/i;
const RAW_UNSAFE = /\$(?:queryRawUnsafe|executeRawUnsafe)\s*\(|\bsequelize\.query\s*\(|\bknex\.raw\s*\(/;
const JS_SHELL = /(?<![\w$.])(?:exec|execSync)\s*\(|\bchild_process\.exec(?:Sync)?\s*\(|\b(?:cp|childProcess)\.exec(?:Sync)?\s*\(/g;
const JS_SPAWN_SHELL = /\b(?:spawn|spawnSync|execFile|execFileSync)\s*\([^\n]*shell\s*:\s*true/;
const PY_SHELL = /\bos\.(?:system|popen)\s*\(|\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(/g;

const RULES: RuleDef[] = [
  { id: "injection.sql-string-built", severity: "high", title: "SQL built by string interpolation or concatenation", detects: "a SQL statement in a string built from non-constant parts, or raw-query APIs given such a string", recommendation: "Use parameterized queries or a query builder's bindings; never splice values into SQL text." },
  { id: "injection.command-built", severity: "high", title: "Shell command built from variable input", detects: "exec/execSync/os.system/os.popen/subprocess(shell=True)/spawn(shell: true) with a command built from non-constant parts or request data", recommendation: "Call the program directly with an argument array (execFile/spawn without a shell, subprocess.run([...])) and validate every argument against an allowlist." },
];

export const injectionAuditor: Auditor = {
  id: "injection",
  name: "SQL and command injection",
  summary: "queries and shell commands assembled from strings with variable parts",
  rules: RULES,
  analyze(view) {
    return view.files.filter(isCode).flatMap((f) => {
      const tainted = taintedNames(f);
      const py = f.language === "python";
      const commandBuilt = (line: string) =>
        [...line.matchAll(py ? PY_SHELL : JS_SHELL)].some((m) => {
          const args = callArgs(line, m.index! + m[0].length - 1);
          const first = args.split(/,(?![^([{]*[)\]}])/)[0] ?? "";
          if (py && /^subprocess/.test(m[0]) && !/shell\s*=\s*True/.test(args)) return false;
          return buildsString(first) || untrusted(first, tainted) || (!/^\s*["'`]/.test(first) && !/^\s*\[/.test(first) && first.trim() !== "" && untrusted(args, tainted));
        });
      return lineHits(f, (line) => [
        (SQL.test(line) || RAW_UNSAFE.test(line)) && buildsString(line) && "injection.sql-string-built",
        commandBuilt(line) && "injection.command-built",
        JS_SPAWN_SHELL.test(line) && (buildsString(line) || untrusted(line, tainted)) && "injection.command-built",
      ]);
    });
  },
};

import type { SourceFile } from "./source-file.js";

// Shared recognisers for the code rules: where untrusted data comes from (a request, a message, a
// tool's output), whether a string is built from non-constant parts, and which local names were
// assigned from untrusted data (a one-step, same-file taint: `const u = req.query.url; fetch(u)`).

/** An expression read from an HTTP request or an event payload. */
export const REQUEST_SOURCE = /\b(?:req|request|ctx\.request|event|c\.req)\s*\.\s*(?:body|query|params|args|form|json|values|files|get_json|data|headers|cookies|param|text)\b|\brequest\.get_json\s*\(|\binput\s*\(/;

/** Names that commonly hold untrusted text in agent code. */
export const UNTRUSTED_NAME = /\b(?:user_?input|userInput|userMessage|user_message|untrusted\w*|query|question|message|msg|body|payload|document|doc|page|html|web_?content|webContent|email|tool_?output|toolOutput|tool_?result|toolResult|search_?results?|retrieved|context_?docs?)\b/i;

/** A string built from a non-constant part: `${x}` (x not an UPPER_CASE constant), f"{x}", "…" + x, % x, .format(. */
export function buildsString(line: string): boolean {
  for (const m of line.matchAll(/\$\{\s*([^}]+?)\s*\}/g)) if (!/^[A-Z0-9_.]+$/.test(m[1]!)) return true;
  if (/(?:^|[^\w])f["'][^"'\n{]{0,300}\{[^}]{1,200}\}/.test(line)) return true;
  if (/["'`]\s*\+\s*[A-Za-z_$(]/.test(line) || /[A-Za-z_$)\]]\s*\+\s*["'`]/.test(line)) return true;
  if (/["']\s*%\s*[\w(]/.test(line)) return true;
  return /["']\s*\.format\s*\(/.test(line);
}

/** The bare identifiers an expression reads (not properties: `a.b` reads `a`). */
const readsNames = (expr: string) => expr.match(/(?<![\w$.])[A-Za-z_$][\w$]*/g) ?? [];

const MAX_TAINTED = 200;

/** Local names assigned (directly, or from a name already tainted) from request-derived expressions in `f`. */
export function taintedNames(f: SourceFile): Set<string> {
  const names = new Set<string>();
  // Statements that start with an assignment (bounded parts: the line may be hostile).
  const assign = /^\s*(?:(?:const|let|var)\s+)?(?:\{([\w\s,]{1,200})\}|([A-Za-z_$][\w$]{0,80}))\s*(?::[\w<>[\]| ]{1,80})?\s*=(?![=>])\s*(.+)$/;
  for (const line of f.code) {
    if (names.size >= MAX_TAINTED) break;
    const m = assign.exec(line);
    if (!m || !untrusted(m[3]!, names)) continue;
    for (const n of (m[1] ?? m[2]!).split(",").map((s) => s.trim()).filter(Boolean)) names.add(n);
  }
  return names;
}

/** Whether `expr` reads the request directly or uses a name tainted by it. */
export function untrusted(expr: string, tainted: Set<string>): boolean {
  return REQUEST_SOURCE.test(expr) || (tainted.size > 0 && readsNames(expr).some((n) => tainted.has(n)));
}

/** The text of a call's argument list on one line (up to the matching parenthesis, or the line's end). */
export function callArgs(line: string, openParen: number): string {
  let depth = 0;
  for (let i = openParen; i < line.length; i++) {
    if (line[i] === "(") depth++;
    else if (line[i] === ")" && --depth === 0) return line.slice(openParen + 1, i);
  }
  return line.slice(openParen + 1);
}

/** A file that defines tools for a model (tool lists, function schemas, tool decorators, MCP tool registrations). */
export const DEFINES_TOOLS = /["']?\b(?:tools|functions|tool_choice|inputSchema|input_schema|parameters)\b["']?\s*[:=]|@tool\b|\bdefineTool\b|\bserver\.(?:tool|registerTool)\s*\(|\btool\s*\(\s*\{/;

/** The words of an identifier: snake_case, kebab-case and camelCase split, lower-cased. */
export const identifierWords = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

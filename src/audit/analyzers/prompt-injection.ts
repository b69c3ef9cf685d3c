import { buildsString, REQUEST_SOURCE, taintedNames, untrusted, UNTRUSTED_NAME } from "../code-patterns.js";
import { excerpt, type Auditor, type Hit, type RuleDef } from "../finding.js";
import { isCode } from "../source-file.js";

// Auditor 2, prompt-injection sinks: places where text the agent does not control becomes part of its
// instructions. A user turn carrying user text is the intended design and is not flagged; instructions
// (system prompts, prompt templates) built from untrusted text are.
//
// Rules (JavaScript/TypeScript and Python sources):
// - prompt-injection.system-interpolation (high): a system message or system prompt (role "system",
//   `system:`/`system_prompt =`/`systemPrompt =`, SystemMessage(…)) built, on its line or the two after,
//   from a non-constant part (`${x}`, f"{x}", concatenation, % or .format) that is request data or a name
//   that usually holds untrusted text (user input, message, document, page, tool output…).
// - prompt-injection.untrusted-in-prompt (medium): a prompt or instruction string (a name containing
//   prompt or instruction) built from request data or from a name tainted by it.
// - prompt-injection.remote-instructions (high): instructions or a system prompt fetched from a URL at
//   run time (a prompt/instruction/system name assigned from fetch/axios/requests/httpx).

const SYSTEM_MARKER = /(?:role\s*[:=]\s*["']system["']|["']system["']\s*:|\bsystem\s*[:=]\s*[`"'f(]|\bsystem_?prompt\s*[:=]|\bsystemPrompt\s*[:=]|\bsystem_?(?:message|instructions?)\s*[:=]|\bsystemMessage\s*[:=]|\bSystemMessage\s*\(|\binstructions\s*[:=]\s*[`"'f])/i;
const PROMPT_NAME = /\b[\w$]{0,60}(?:prompt|instruction)[\w$]{0,60}\s*(?::\s*[\w<>[\]]{1,60}\s*)?[:=](?!=)/i;
const REMOTE = /\b[\w$]{0,60}(?:prompt|instruction|system)[\w$]{0,60}\s*[:=](?!=)\s*(?:await\s+)?(?:\(?\s*await\s+)?(?:fetch|axios(?:\.get)?|got|requests\.get|httpx\.get|urlopen)\s*\(/i;

const RULES: RuleDef[] = [
  { id: "prompt-injection.system-interpolation", severity: "high", title: "Untrusted text interpolated into the system prompt", detects: "a system message/prompt built from a non-constant part that is request data or untrusted-named text", recommendation: "Keep system instructions constant; pass untrusted text only as delimited user or tool content, and never let it change the instructions." },
  { id: "prompt-injection.untrusted-in-prompt", severity: "medium", title: "Request data concatenated into a prompt template", detects: "a prompt/instruction string built from request data or a name assigned from it", recommendation: "Quote untrusted input as data (delimited, labelled as untrusted) rather than splicing it into instructions; validate and bound its length." },
  { id: "prompt-injection.remote-instructions", severity: "high", title: "Instructions loaded from a URL at run time", detects: "a prompt, instruction or system value assigned from an HTTP fetch", recommendation: "Ship instructions with the code (versioned, reviewed); if they must be remote, pin them by hash and verify before use." },
];

export const promptInjectionAuditor: Auditor = {
  id: "prompt-injection",
  name: "Prompt-injection sinks",
  summary: "untrusted input concatenated into prompts and system messages, and instructions loaded at run time",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    for (const f of view.files.filter(isCode)) {
      const tainted = taintedNames(f);
      const hostile = (s: string) => untrusted(s, tainted) || UNTRUSTED_NAME.test(s);
      f.code.forEach((line, i) => {
        if (REMOTE.test(line)) {
          hits.push({ rule: "prompt-injection.remote-instructions", file: f.index, line: i + 1, evidence: excerpt(line) });
          return;
        }
        if (SYSTEM_MARKER.test(line)) {
          const window = f.code.slice(i, i + 3);
          const at = window.findIndex((l) => buildsString(l) && hostile(interpolated(l)));
          if (at >= 0) {
            hits.push({ rule: "prompt-injection.system-interpolation", file: f.index, line: i + 1 + at, evidence: excerpt(window[at]!) });
            return;
          }
        }
        if (PROMPT_NAME.test(line) && buildsString(line) && (REQUEST_SOURCE.test(line) || untrusted(interpolated(line), tainted))) {
          hits.push({ rule: "prompt-injection.untrusted-in-prompt", file: f.index, line: i + 1, evidence: excerpt(line) });
        }
      });
    }
    return hits;
  },
};

/** The non-literal parts a line splices into a string (what is inside ${…} / {…}, or what is concatenated). */
function interpolated(line: string): string {
  const parts = [...line.matchAll(/\$\{([^}]+)\}|\{([^}]+)\}/g)].map((m) => m[1] ?? m[2]!);
  const concatenated = [...line.matchAll(/\+\s*([A-Za-z_$][\w$.[\]'"]{0,100})|([A-Za-z_$][\w$.[\]'"]{0,100})\s*\+/g)].map((m) => m[1] ?? m[2]!);
  const formatted = [...line.matchAll(/(?:%\s*\(?|\.format\s*\()([^)]*)/g)].map((m) => m[1]!);
  return [...parts, ...concatenated, ...formatted].join(" ");
}

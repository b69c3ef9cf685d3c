import { CONTENT_TRAP_RULES } from "../trust/content-scan.js";
import { DEFINES_TOOLS, identifierWords, REQUEST_SOURCE, taintedNames, untrusted, UNTRUSTED_NAME } from "./code-patterns.js";
import { excerpt, type Auditor, type Hit, type RuleDef } from "./finding.js";
import { lineHits } from "./line-hits.js";
import { isCode, isConfig, mentions, type SourceFile } from "./source-file.js";

// The category-specific checks of the multi-agent audit: what the thirteen auditors do not already look
// for, one or more per OWASP agentic risk category (ASI01 to ASI10).
//
// Rules:
// - asi01.embedded-instructions (high): an artifact line matching a content-trap rule (instructions to
//   ignore previous instructions, role overrides, system-prompt probes, secret requests, zero-width or
//   bidi-override characters, hidden HTML comments with instructions; `<script>` tags excepted): text an
//   agent may read as orders. In program source only comments are read this way (plus hidden characters
//   on any line).
//   The evidence names the rule, never the text.
// - asi02.destructive-tool-unconfirmed (medium): in a file that defines tools, a tool whose name has a
//   destructive or irreversible verb as a word (delete, drop, remove, destroy, transfer, pay, wire,
//   refund, shutdown, deploy, purge, wipe, truncate, erase), when the file names no confirmation or approval step.
// - asi03.credential-passthrough (high): the caller's Authorization header or whole header set taken into
//   headers within three lines of an outbound HTTP call (forwarded to another service: a confused deputy).
// - asi04.runtime-fetched-tool (high): a tool or MCP server launched through npx/uvx/bunx/pipx run/
//   pnpm dlx without a pinned version, or code imported from an http(s) URL at run time.
// - asi06.untrusted-memory-write (medium): a memory or vector-store write (add, add_texts,
//   addDocuments, upsert, save, store, insert, remember, put) of request data or untrusted-named text, in a
//   file with no sanitising or validation step.
// - ASI07 has no rule of its own here: the endpoint auditor's findings on agent-facing routes (a2a,
//   agents, tasks, messages, mcp, rpc, jsonrpc, webhooks, inbox) are also filed under it.
// - asi08.unbounded-fan-out (medium): Promise.all/asyncio.gather over a list taken from the request.
// - asi09.approval-disabled (high): auto-approval on, or approval/confirmation/human-in-the-loop off.
// - asi10.audit-trail-disabled (medium): logging, telemetry or auditing switched off in code or config.
// - asi10.self-modification (high): the agent writes its own source files.

const TOOL_NAME = /["']?\bname["']?\s*[:=]\s*["']([\w-]+)["']/;
const DESTRUCTIVE_VERBS = new Set(["delete", "drop", "remove", "destroy", "transfer", "pay", "wire", "refund", "shutdown", "deploy", "purge", "wipe", "truncate", "erase"]);
const destructiveTool = (line: string) => {
  const name = TOOL_NAME.exec(line)?.[1];
  return name !== undefined && identifierWords(name).some((w) => DESTRUCTIVE_VERBS.has(w));
};
const CONFIRMATION = /confirm|approv|human_in_the_loop|humanInTheLoop|requires_?confirmation|needsApproval|dry_?run|dryRun/i;
const PASSTHROUGH = /\b[Aa]uthorization["']?\s*:\s*(?:req|request|ctx\.request)\.(?:headers?|get)\b|\bheaders\s*[:=]\s*(?:req|request|ctx\.request)\.headers\b|\bheaders\s*=\s*dict\(\s*request\.headers\s*\)/;
const OUTBOUND = /(?<![\w$.])fetch\s*\(|\baxios\b|\bgot\s*\(|\bhttps?\.request\s*\(|\brequests\.\w+\s*\(|\bhttpx\.\w+\s*\(/;
const RUNNER = /\b(?:npx|uvx|bunx|pipx\s+run|pnpm\s+dlx)\b/;
const REMOTE_IMPORT = /\bimport\s*\(\s*["'`]https?:\/\/|\brequire\s*\(\s*["'`]https?:\/\//;
const MEMORY_WRITE = /\b(?:memory|memories|vector_?store|vectorStore|vectordb|vectorDb|index|collection|chroma|pinecone|weaviate|qdrant|store|kb|knowledge(?:_?base)?)\.(?:add|add_texts|addTexts|add_documents|addDocuments|upsert|save|store|insert|remember|put)\s*\(/i;
const SANITISES = /sanitiz|sanitis|validat|moderat|scanContent|scan_content|filter_?untrusted|strip_?instructions/i;
const FAN_OUT = /\bPromise\.all(?:Settled)?\s*\(\s*([\w$.[\]'"]+)\.map\s*\(|\basyncio\.gather\s*\(\s*\*\s*[[(][^\])]{0,300}\bfor\s+\w+\s+in\s+([\w.[\]'"()]{1,100})/;
const APPROVAL_OFF = /["']?\b(?:auto_?approve|autoApprove|auto_?confirm|autoConfirm|skip_?confirm(?:ation)?|skipConfirm(?:ation)?|yolo)\b["']?\s*[:=]\s*(?:true|True|1|["']?(?:all|always)["']?)\b|["']?\b(?:require_?approval|requireApproval|require_?confirmation|requireConfirmation|human_in_the_loop|humanInTheLoop|needs_?approval|needsApproval|confirm_?actions|confirmActions)\b["']?\s*[:=]\s*(?:false|False|0|["']?never["']?)\b/;
const AUDIT_OFF = /\blogging\.disable\s*\(|\bconsole\.(?:log|info|warn|error)\s*=\s*(?:\(\s*\)\s*=>|function|null|undefined|\(\)\s*=>)|["']?\b(?:telemetry|audit_?log(?:ging)?|auditLog(?:ging)?|audit)\b["']?\s*[:=]\s*(?:false|False|0|["']?(?:off|none|disabled)["']?)\b|["']?\bdisable_?(?:logging|audit|telemetry)\b["']?\s*[:=]\s*(?:true|True|1)\b/;
const SELF_WRITE = /\b(?:writeFile|writeFileSync|appendFile|appendFileSync)\s*\(\s*(?:__filename|process\.argv\[1\]|fileURLToPath\(\s*import\.meta\.url\s*\)|new\s+URL\([^)]{0,200}import\.meta\.url)|\bopen\s*\(\s*(?:__file__|sys\.argv\[0\])\s*,\s*["'][wa]/;

const RULES: RuleDef[] = [
  { id: "asi01.embedded-instructions", severity: "high", title: "Instructions aimed at agents embedded in an artifact", detects: "content-trap patterns (ignore-previous-instructions, role overrides, prompt probes, secret requests, hidden characters, hidden HTML instructions) in supplied text", recommendation: "Remove the embedded instructions; treat any text the agent reads as data and scan it before it reaches a model." },
  { id: "asi02.destructive-tool-unconfirmed", severity: "medium", title: "Destructive tool without a confirmation step", detects: "a tool named for a destructive or irreversible action in a file that names no confirmation or approval", recommendation: "Require explicit confirmation (or a human approval) and support dry runs for destructive or financial tools." },
  { id: "asi03.credential-passthrough", severity: "high", title: "Caller's credentials forwarded to another service", detects: "the incoming Authorization header or all incoming headers passed on to an outbound call", recommendation: "Call downstream services with the agent's own scoped credentials (or a token exchanged for the audience), never the caller's." },
  { id: "asi04.runtime-fetched-tool", severity: "high", title: "Tool or code fetched at run time without a pinned version", detects: "npx/uvx/bunx/pipx run/pnpm dlx launching an unpinned package, or import/require of an http(s) URL", recommendation: "Pin tools and MCP servers to exact versions (or vendor them) and verify their integrity before launch." },
  { id: "asi06.untrusted-memory-write", severity: "medium", title: "Untrusted text written to agent memory", detects: "a memory or vector-store write of request data or untrusted-named text in a file with no sanitising step", recommendation: "Validate and label what enters memory (source, trust level), scan it for instructions, and scope memory per user and session." },
  { id: "asi08.unbounded-fan-out", severity: "medium", title: "Unbounded fan-out over caller-supplied items", detects: "Promise.all or asyncio.gather over a list taken from the request", recommendation: "Cap the number of items and the concurrency (a pool or queue), and fail fast when a dependency is unhealthy." },
  { id: "asi09.approval-disabled", severity: "high", title: "Human approval switched off", detects: "auto-approve/auto-confirm/skip-confirmation on, or require-approval/human-in-the-loop off", recommendation: "Keep a human approval step for high-impact actions; show the human what will happen, not only the agent's summary." },
  { id: "asi10.audit-trail-disabled", severity: "medium", title: "Audit trail or telemetry switched off", detects: "logging.disable, console methods replaced by no-ops, audit/telemetry settings off", recommendation: "Keep an append-only record of the agent's actions and tool calls." },
  { id: "asi10.self-modification", severity: "high", title: "Agent writes its own source", detects: "a file write to __filename, import.meta.url, process.argv[1], __file__ or sys.argv[0]", recommendation: "Make the agent's code read-only at run time; ship changes through review and deployment." },
];

// A <script> tag in supplied HTML is code, not an instruction to an agent.
const AGENT_TRAPS = CONTENT_TRAP_RULES.filter((r) => r.id !== "markup.script");
const HIDDEN_TEXT = CONTENT_TRAP_RULES.filter((r) => r.id.startsWith("hidden."));

/** Paths of agent-to-agent channels: endpoint findings on them also fall under ASI07. */
export const AGENT_CHANNEL = /\/(?:a2a|agents?|tasks?|messages?|mcp|rpc|jsonrpc|webhooks?|inbox)\b/i;

function runtimeTools(f: SourceFile): Hit[] {
  const hits: Hit[] = [];
  if (f.language === "json") {
    let doc: unknown;
    try {
      doc = JSON.parse(f.text);
    } catch {
      doc = undefined;
    }
    const walk = (v: unknown) => {
      if (Array.isArray(v)) return v.forEach(walk);
      if (!v || typeof v !== "object") return;
      const o = v as Record<string, unknown>;
      if (typeof o.command === "string" && RUNNER.test(o.command) && Array.isArray(o.args)) {
        const pkg = o.args.find((a): a is string => typeof a === "string" && !a.startsWith("-"));
        if (pkg && !pinned(pkg)) {
          const i = f.lines.findIndex((l) => l.includes(`"${pkg}"`));
          hits.push({ rule: "asi04.runtime-fetched-tool", file: f.index, line: i >= 0 ? i + 1 : undefined, evidence: excerpt(`${o.command} ${o.args.join(" ")}`) });
        }
      }
      Object.values(o).forEach(walk);
    };
    walk(doc);
    return hits;
  }
  return lineHits(f, (line) => {
    const m = /\b(?:npx|uvx|bunx|pipx\s+run|pnpm\s+dlx)\s+((?:--?\w[\w-]*\s+){0,10})([@\w][\w@/.=-]*)/.exec(line);
    return ((m && !pinned(m[2]!)) || REMOTE_IMPORT.test(line)) && "asi04.runtime-fetched-tool";
  });
}

/** npm `name@1.2.3` / `@scope/name@1.2.3`, Python `name==1.2.3` or `name@1.2.3`. */
const pinned = (pkg: string) => /^(?:@[^/]+\/)?[^@=]+(?:@|==)v?\d+\.\d+/.test(pkg);

export const asiChecks: Auditor = {
  id: "asi-checks",
  name: "Agentic risk category checks",
  summary: "checks specific to the OWASP agentic risk categories that the thirteen auditors do not cover",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    for (const f of view.files) {
      // Prose (documents, manifests) in full; in code, comments in full (instructions hidden in comments
      // reach agents that read the code) and hidden characters anywhere, since code itself legitimately
      // says things like "export … password".
      f.lines.forEach((line, i) => {
        const comment = isCode(f) && f.code[i] !== line;
        const rules = !isCode(f) || comment ? AGENT_TRAPS : HIDDEN_TEXT;
        const trapped = rules.filter((r) => r.pattern.test(line)).map((r) => r.id);
        if (trapped.length) hits.push({ rule: "asi01.embedded-instructions", file: f.index, line: i + 1, evidence: `matches content-trap rule ${trapped.join(", ")} (text withheld)` });
      });
      if (!isCode(f) && !isConfig(f)) continue;
      hits.push(...runtimeTools(f));
      const confirmed = mentions(f, CONFIRMATION) || !mentions(f, DEFINES_TOOLS);
      const tainted = isCode(f) ? taintedNames(f) : new Set<string>();
      const sanitised = mentions(f, SANITISES);
      hits.push(
        ...lineHits(f, (line, i) => {
          const anyFile = [
            !confirmed && destructiveTool(line) && "asi02.destructive-tool-unconfirmed",
            APPROVAL_OFF.test(line) && "asi09.approval-disabled",
            AUDIT_OFF.test(line) && "asi10.audit-trail-disabled",
          ];
          if (!isCode(f)) return anyFile;
          const fan = FAN_OUT.exec(line);
          return [
            ...anyFile,
            PASSTHROUGH.test(line) && f.code.slice(Math.max(0, i - 3), i + 4).some((l) => OUTBOUND.test(l)) && "asi03.credential-passthrough",
            !sanitised && MEMORY_WRITE.test(line) && (REQUEST_SOURCE.test(line) || UNTRUSTED_NAME.test(line.slice(line.search(MEMORY_WRITE))) || untrusted(line, tainted)) && "asi06.untrusted-memory-write",
            fan && untrusted(fan[1] ?? fan[2] ?? "", tainted) && "asi08.unbounded-fan-out",
            SELF_WRITE.test(line) && "asi10.self-modification",
          ];
        }),
      );
    }
    return hits;
  },
};

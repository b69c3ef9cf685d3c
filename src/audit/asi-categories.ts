import { readFileSync } from "node:fs";
import { routesOf } from "./analyzers/endpoint-auth.js";
import { AGENT_CHANNEL } from "./asi-checks.js";
import type { Capability } from "./capability-profile.js";
import type { AuditView, Finding } from "./finding.js";
import { isCode, type SourceFile } from "./source-file.js";

// The ten OWASP agentic risk categories (ASI01 to ASI10), shipped as data (src/audit/data/asi-top10.json):
// each with its name, the rules filed under it (the thirteen auditors' and the category checks'), and
// when it applies to the supplied artifacts.

export interface AsiCategory {
  id: string;
  name: string;
  summary: string;
  rules: string[];
  /** Rules filed under the category only for findings on agent-facing routes (a2a, agents, tasks, mcp…). */
  on_agent_routes?: string[];
  applies_when: string;
}

const DATA = JSON.parse(readFileSync(new URL("./data/asi-top10.json", import.meta.url), "utf8")) as { framework: string; source: string; categories: AsiCategory[] };

export const ASI_FRAMEWORK = { name: DATA.framework, source: DATA.source };
export const ASI_CATEGORIES: readonly AsiCategory[] = DATA.categories;

/** Every rule a category's checks include. */
export const categoryRules = (c: AsiCategory) => [...c.rules, ...(c.on_agent_routes ?? [])];

/** The categories a finding falls under: by its rule, and by route for endpoint findings on agent-facing routes. */
export function asiCategoriesOf(f: Pick<Finding, "rule" | "evidence">): string[] {
  // Endpoint findings' evidence starts "<METHOD> <path>: ".
  const path = /^[A-Z]+ (\S+):/.exec(f.evidence)?.[1];
  const agentRoute = path !== undefined && AGENT_CHANNEL.test(path);
  return ASI_CATEGORIES.filter((c) => c.rules.includes(f.rule) || (agentRoute && c.on_agent_routes?.includes(f.rule))).map((c) => c.id);
}

const MANIFEST = /^(?:package\.json|package-lock\.json|npm-shrinkwrap\.json|requirements.*\.txt|pyproject\.toml|mcp\.json|\.mcp\.json|claude_desktop_config\.json)$/i;
const PROMPT_FILE = /prompt|instruction|system|agents?\.md|claude\.md/i;
const TOOLS = /["']?\b(?:tools|functions|tool_choice|inputSchema|input_schema)\b["']?\s*[:=]|@tool\b|\bdefineTool\b|\bserver\.tool\s*\(/;
const ACTIONS: Capability[] = ["shell", "filesystem_write", "payments", "email", "database"];
const APPROVALS = /approv|confirm|human_in_the_loop|humanInTheLoop/i;

/** Whether a category applies to what was examined, and why not when it does not. */
export function applicability(view: AuditView, observed: Set<Capability>): Map<string, string | undefined> {
  const code = view.files.some(isCode);
  const routes = routesOf(view.files).length > 0;
  const any = (p: (f: SourceFile) => boolean) => view.files.some(p);
  const defines = (re: RegExp) => any((f) => f.code.some((l) => re.test(l)));
  const has = (c: Capability) => observed.has(c);
  const why: Record<string, string | undefined> = {
    ASI01: has("llm") || any((f) => PROMPT_FILE.test(f.name)) ? undefined : "no model calls and no prompt or instruction files among the examined artifacts",
    ASI02: defines(TOOLS) || ["network", "shell", "filesystem_write", "payments", "email", "database"].some((c) => has(c as Capability)) ? undefined : "no tools defined and no network, shell, file, payment, email or database access in the examined artifacts",
    ASI03: code ? undefined : "no code was examined",
    ASI04: code || any((f) => MANIFEST.test(f.name)) ? undefined : "no code, dependency manifests or tool configurations were examined",
    ASI05: code ? undefined : "no code was examined",
    ASI06: has("database") || has("filesystem_write") ? undefined : "the examined code persists nothing (no database, vector store or file writes)",
    ASI07: has("network") || routes ? undefined : "the examined code neither reaches the network nor serves HTTP routes",
    ASI08: has("network") || has("llm") || routes ? undefined : "the examined code neither reaches the network, nor calls a model, nor serves HTTP routes",
    ASI09: ACTIONS.some(has) || defines(APPROVALS) ? undefined : "the examined code takes no actions (shell, file writes, payments, email, database) and configures no approvals",
    ASI10: code ? undefined : "no code was examined",
  };
  return new Map(Object.entries(why));
}

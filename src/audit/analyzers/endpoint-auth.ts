import { excerpt, type Auditor, type Hit, type RuleDef } from "../finding.js";
import { isCode, type SourceFile } from "../source-file.js";

// Auditor 6, missing authentication on exposed endpoints: HTTP routes declared in Express, Fastify,
// Koa/Hono-style routers, Flask and FastAPI, with no authentication step in sight.
//
// A route counts as authenticated when its declaration (the route line, and for Python the decorator
// block and the function signature) names an authentication step (auth, authenticate, requireAuth,
// requireUser/Role/Admin/Key, anything with token, jwt, passport, session, apiKey, bearer, login_required,
// Depends(…), Security(…), permission, guard, signature, hmac), or when the file installs one for every route (`app.use(<auth…>)`,
// `router.use(<auth…>)`, `before_request` with an auth check).
//
// Rules:
// - auth.unauthenticated-mutation (high): a POST, PUT, PATCH, DELETE (or all-methods) route without one.
// - auth.unauthenticated-sensitive-route (high): a route of any method whose path looks administrative
//   or internal (admin, internal, debug, config, env, shutdown, exec, eval, console, metrics) without one.

const AUTH = /auth|authenticate|require_?(?:user|login|role|admin|scope|key)|token|jwt|passport|session|api_?key|apiKey|bearer|login_required|permission|Depends\s*\(|Security\s*\(|guard|signature|hmac/i;
const JS_ROUTE = /\b(?:app|router|server|api|fastify|routes?|hono)\s*\.\s*(get|post|put|patch|delete|all)\s*\(\s*["'`]([^"'`]+)["'`]\s*,?(.*)$/i;
const PY_ROUTE = /^\s*@\s*(?:app|bp|blueprint|router|api)\s*\.\s*(route|get|post|put|patch|delete|api_route)\s*\(\s*["']([^"']+)["']([^)]*)\)?/i;
const JS_GLOBAL_AUTH = /\b(?:app|router|server|api|fastify)\s*\.\s*(?:use|addHook|register)\s*\(([^)]*)/i;
const SENSITIVE_PATH = /\/(?:admin|internal|debug|config|env|shutdown|exec|eval|console|metrics|_?debug)\b/i;
const MUTATING = new Set(["post", "put", "patch", "delete", "all"]);

const RULES: RuleDef[] = [
  { id: "auth.unauthenticated-mutation", severity: "high", title: "State-changing endpoint without authentication", detects: "a POST/PUT/PATCH/DELETE route whose declaration and file name no authentication step", recommendation: "Require authentication (and an authorization check) on every state-changing route, ideally as router-wide middleware with explicit public exceptions." },
  { id: "auth.unauthenticated-sensitive-route", severity: "high", title: "Administrative or internal endpoint without authentication", detects: "a route under admin/internal/debug/config/env/shutdown/exec/eval/console/metrics without an authentication step", recommendation: "Remove debug and admin routes from production builds or put them behind authentication and network restrictions." },
];

export interface Route {
  file: number;
  line: number;
  method: string;
  path: string;
  authenticated: boolean;
  text: string;
}

function jsRoutes(f: SourceFile): Route[] {
  const global = f.code.some((l) => {
    const m = JS_GLOBAL_AUTH.exec(l);
    return m !== null && AUTH.test(m[1]!);
  });
  const routes: Route[] = [];
  f.code.forEach((line, i) => {
    const m = JS_ROUTE.exec(line);
    if (!m) return;
    // The handler list may continue on the next lines: read up to the handler's arrow or function.
    const closed = /=>|\bfunction\b|\)\s*;?\s*$/.test(m[3]!);
    const rest = closed ? m[3]! : [m[3]!, ...f.code.slice(i + 1, i + 4)].join(" ");
    const head = rest.split(/=>|\bfunction\b/)[0]!;
    routes.push({ file: f.index, line: i + 1, method: m[1]!.toLowerCase(), path: m[2]!, authenticated: global || AUTH.test(head), text: line });
  });
  return routes;
}

function pyRoutes(f: SourceFile): Route[] {
  const global = f.code.some((l, i) => /before_request/.test(l) && f.code.slice(i, i + 8).some((x) => AUTH.test(x)));
  const routes: Route[] = [];
  f.code.forEach((line, i) => {
    const m = PY_ROUTE.exec(line);
    if (!m) return;
    const kind = m[1]!.toLowerCase();
    const methods = kind === "route" || kind === "api_route" ? (/methods\s*=\s*\[([^\]]*)\]/i.exec(m[3] ?? "")?.[1] ?? "GET").toLowerCase() : kind;
    // The decorator block above and below, and the signature of the function it decorates.
    let start = i;
    while (start > 0 && /^\s*@/.test(f.code[start - 1]!)) start--;
    let end = i;
    while (end < f.code.length - 1 && !/^\s*(?:async\s+)?def\s/.test(f.code[end]!)) end++;
    const block = f.code.slice(start, end + 1).filter((_, n) => start + n !== i).join(" ") + (m[3] ?? "").replace(/methods\s*=\s*\[[^\]]*\]/i, "");
    for (const method of methods.match(/get|post|put|patch|delete/g) ?? ["get"]) {
      routes.push({ file: f.index, line: i + 1, method, path: m[2]!, authenticated: global || AUTH.test(block), text: line });
    }
  });
  return routes;
}

/** Every HTTP route the supplied code declares, with whether an authentication step was found. */
export function routesOf(files: SourceFile[]): Route[] {
  return files.filter(isCode).flatMap((f) => (f.language === "python" ? pyRoutes(f) : jsRoutes(f)));
}

export const endpointAuthAuditor: Auditor = {
  id: "endpoint-auth",
  name: "Missing authentication on exposed endpoints",
  summary: "HTTP routes (Express, Fastify, Flask, FastAPI…) that change state or expose internals without an authentication step",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    const seen = new Set<string>();
    for (const r of routesOf(view.files)) {
      if (r.authenticated || seen.has(`${r.file}:${r.line}`)) continue;
      const rule = SENSITIVE_PATH.test(r.path) ? "auth.unauthenticated-sensitive-route" : MUTATING.has(r.method) ? "auth.unauthenticated-mutation" : undefined;
      if (!rule) continue;
      seen.add(`${r.file}:${r.line}`);
      hits.push({ rule, file: r.file, line: r.line, evidence: excerpt(`${r.method.toUpperCase()} ${r.path}: ${r.text}`) });
    }
    return hits;
  },
};

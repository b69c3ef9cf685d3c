import { excerpt, type Auditor, type Hit, type RuleDef } from "../finding.js";
import { lineHits } from "../line-hits.js";
import { isCode, mentions, type SourceFile } from "../source-file.js";

// Auditor 12, missing rate limiting and resource bounds.
//
// Rules:
// - bounds.no-rate-limit (medium): the artifacts start an HTTP server (express(), fastify(), new Hono(),
//   http.createServer, Flask(__name__), FastAPI(), app.listen) and no supplied artifact mentions rate
//   limiting (rateLimit, rate_limit, limiter, throttle, slowDown); reported once, where the server is made.
// - bounds.unbounded-agent-loop (medium): an endless loop (while (true), while True:, for (;;), while 1)
//   in a file that calls a model or tools, with no iteration, step or turn bound named in the file
//   (max_iterations, maxSteps, MAX_TURNS…).
// - bounds.no-timeout (low): an outbound HTTP call with no timeout: Python requests/httpx calls without
//   timeout=, or fetch(…) with no signal in a file that never sets a timeout (AbortSignal.timeout,
//   AbortController, timeout).

const SERVER = /\bexpress\s*\(\s*\)|\bfastify\s*\(|\bnew\s+Hono\s*\(|\bhttp\.createServer\s*\(|\bFlask\s*\(\s*__name__|\bFastAPI\s*\(|\bapp\.listen\s*\(|\bnew\s+Koa\s*\(/;
const RATE_LIMIT = /rate_?limit|rateLimit|RateLimit|limiter|Limiter|throttl|slowDown|slow_down/;
const ENDLESS = /\bwhile\s*\(\s*(?:true|1)\s*\)|\bwhile\s+(?:True|1)\s*:|\bfor\s*\(\s*;\s*;\s*\)/;
const CALLS_MODEL = /chat\.completions|completions\.create|messages\.create|generateText|streamText|\.invoke\s*\(|\.complete\s*\(|\bllm\b|agent\.run|callTool|call_tool|run_tool|tool_calls|toolCalls/i;
const LOOP_BOUND = /max_?(?:iterations|steps|turns|rounds|calls|loops|attempts)|maxIterations|maxSteps|maxTurns|maxRounds|MAX_(?:ITERATIONS|STEPS|TURNS|ROUNDS|CALLS|LOOPS)|step_?limit|stepLimit|budget/i;
const PY_HTTP = /\b(?:requests|httpx)\.(?:get|post|put|patch|delete|head|request)\s*\(/;
const JS_FETCH = /(?<![\w$.])fetch\s*\(/;
const JS_TIMEOUT = /AbortSignal\.timeout|AbortController|\btimeout\b/i;

const RULES: RuleDef[] = [
  { id: "bounds.no-rate-limit", severity: "medium", title: "HTTP server without rate limiting", detects: "a server is started and no supplied artifact mentions rate limiting", recommendation: "Rate-limit per caller (and globally) in front of every route, especially those that call models or tools." },
  { id: "bounds.unbounded-agent-loop", severity: "medium", title: "Agent loop without an iteration bound", detects: "an endless loop in a file that calls a model or tools and names no step/turn/iteration limit", recommendation: "Bound every agent loop (steps, tool calls, tokens, wall time) and stop with an error when a bound is reached." },
  { id: "bounds.no-timeout", severity: "low", title: "Outbound call without a timeout", detects: "requests/httpx without timeout=, fetch without a signal in a file that sets no timeout", recommendation: "Give every outbound call a timeout (and a size limit) so one slow dependency cannot hold the agent." },
];

export const resourceBoundsAuditor: Auditor = {
  id: "resource-bounds",
  name: "Missing rate limiting and resource bounds",
  summary: "servers without rate limits, agent loops without bounds, outbound calls without timeouts",
  rules: RULES,
  analyze(view) {
    const hits: Hit[] = [];
    const code = view.files.filter(isCode);
    const limited = view.files.some((f) => mentions(f, RATE_LIMIT));
    if (!limited) {
      const server = code.flatMap((f) => f.code.map((l, i) => ({ f, l, i }))).find((x) => SERVER.test(x.l));
      if (server) hits.push({ rule: "bounds.no-rate-limit", file: server.f.index, line: server.i + 1, evidence: excerpt(server.l) });
    }
    for (const f of code) {
      hits.push(...loops(f));
      const timeoutSet = mentions(f, JS_TIMEOUT);
      hits.push(
        ...lineHits(f, (line) => {
          const unbounded = f.language === "python" ? PY_HTTP.test(line) && !/timeout\s*=/.test(line) : JS_FETCH.test(line) && !/signal\s*:|timeout/i.test(line) && !timeoutSet;
          return unbounded && "bounds.no-timeout";
        }),
      );
    }
    return hits;
  },
};

function loops(f: SourceFile): Hit[] {
  if (!mentions(f, CALLS_MODEL) || mentions(f, LOOP_BOUND)) return [];
  return lineHits(f, (line) => ENDLESS.test(line) && "bounds.unbounded-agent-loop");
}

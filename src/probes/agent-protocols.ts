import { randomUUID } from "node:crypto";
import { safeRequest, type SafeFetchPolicy, type SafeFullResponse } from "../platform/http/safe-fetch.js";

// Talking to a counterparty agent, one message at a time, through the safe fetcher (no redirects
// followed; a redirect is an answer the probe reports). Three protocols:
//   http  POST <target> {"message", "conversation_id", "history": [{role, content}]} -> the reply text is
//         the first string among reply, response, answer, output, text, content, message,
//         message.content, choices[0].message.content, result; else the whole JSON; a non-JSON body is
//         the text itself.
//   a2a   A2A 0.3 JSON-RPC `message/send` (a user Message with one text part, the probe's contextId,
//         blocking) -> text and data parts of the returned Message, or of the Task's status message and
//         artifacts; a Task still submitted/working is polled with `tasks/get` until the probe's timeout.
//   mcp   MCP over streamable HTTP, request/response form: `initialize` (protocol 2025-06-18), the
//         `notifications/initialized` notification, then `tools/call` on the named tool with the
//         message in the named argument -> the text contents of the result (a JSON or an SSE answer
//         whose `data:` lines carry the JSON-RPC response). MCP tools are stateless here: a later turn
//         carries the earlier turns as a transcript in its message.

export type Protocol = "http" | "a2a" | "mcp";

/** Why a message got no usable answer: `unreachable` (network, timeout) and `http` 5xx/429 may pass; the rest will not. */
export class AgentCallError extends Error {
  constructor(
    readonly kind: "unreachable" | "http" | "protocol",
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
  get transient(): boolean {
    return this.kind === "unreachable" || (this.kind === "http" && (this.status === undefined || this.status >= 500 || this.status === 429));
  }
}

export interface Turn {
  message: string;
  conversationId: string;
  history: { role: "user" | "assistant"; content: string }[];
}

export interface AgentAnswer {
  status: number;
  text: string;
  /** The parsed answer (JSON) for structural detectors. */
  raw: unknown;
  /** What was sent: method and the JSON body. */
  request: { method: string; body: string };
}

export interface AgentSession {
  send(turn: Turn, timeoutMs: number): Promise<AgentAnswer>;
}

export interface SessionOptions {
  target: string;
  protocol: Protocol;
  policy: SafeFetchPolicy;
  userAgent: string;
  mcp?: { tool: string; argument: string };
  maxBytes?: number;
}

const MAX_BYTES = 256 * 1024;

async function post(o: SessionOptions, body: unknown, timeoutMs: number, headers: Record<string, string> = {}): Promise<{ res: SafeFullResponse; body: string }> {
  const text = JSON.stringify(body);
  let res: SafeFullResponse;
  try {
    res = await safeRequest(o.target, { method: "POST", body: text, timeoutMs, maxBytes: o.maxBytes ?? MAX_BYTES, headers: { "content-type": "application/json", "user-agent": o.userAgent, ...headers } }, o.policy);
  } catch (err) {
    throw new AgentCallError("unreachable", `no answer from ${o.target}: ${(err as Error).message}`);
  }
  if (res.status < 200 || res.status >= 300) throw new AgentCallError("http", `${o.target} answered HTTP ${res.status}`, res.status);
  return { res, body: text };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AgentCallError("protocol", `${what} is not JSON`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The reply text of a plain HTTP agent's JSON answer. */
export function replyText(json: unknown): string {
  if (typeof json === "string") return json;
  if (isObject(json)) {
    for (const k of ["reply", "response", "answer", "output", "text", "content", "message", "result"]) {
      const v = json[k];
      if (typeof v === "string") return v;
      if (isObject(v) && typeof v.content === "string") return v.content;
    }
    const choice = Array.isArray(json.choices) ? json.choices[0] : undefined;
    if (isObject(choice) && isObject(choice.message) && typeof choice.message.content === "string") return choice.message.content;
  }
  return JSON.stringify(json);
}

function httpSession(o: SessionOptions): AgentSession {
  return {
    async send(turn, timeoutMs) {
      const body = { message: turn.message, conversation_id: turn.conversationId, history: turn.history };
      const { res, body: sent } = await post(o, body, timeoutMs, { accept: "application/json, text/plain;q=0.9" });
      const type = String(res.headers["content-type"] ?? "");
      const raw = /json/i.test(type) ? parseJson(res.body, "the answer") : res.body;
      return { status: res.status, text: replyText(raw), raw, request: { method: "POST", body: sent } };
    },
  };
}

// --- A2A 0.3 JSON-RPC ---------------------------------------------------------------------------

const A2A_WAITING = new Set(["submitted", "working"]);

function a2aParts(parts: unknown): string[] {
  if (!Array.isArray(parts)) return [];
  return parts.flatMap((p) => (isObject(p) ? (typeof p.text === "string" ? [p.text] : p.data !== undefined ? [JSON.stringify(p.data)] : []) : []));
}

function a2aText(result: Record<string, unknown>): string {
  if (result.kind === "message" || Array.isArray(result.parts)) return a2aParts(result.parts).join("\n");
  const status = isObject(result.status) ? result.status : {};
  const fromStatus = isObject(status.message) ? a2aParts(status.message.parts) : [];
  const fromArtifacts = Array.isArray(result.artifacts) ? result.artifacts.flatMap((a) => (isObject(a) ? a2aParts(a.parts) : [])) : [];
  return [...fromStatus, ...fromArtifacts].join("\n");
}

function rpcResult(json: unknown, what: string): Record<string, unknown> {
  if (!isObject(json) || json.jsonrpc !== "2.0") throw new AgentCallError("protocol", `${what} is not a JSON-RPC 2.0 response`);
  if (isObject(json.error)) throw new AgentCallError("protocol", `${what}: JSON-RPC error ${String(json.error.code)} ${String(json.error.message ?? "")}`.trim());
  if (!isObject(json.result)) throw new AgentCallError("protocol", `${what} has no result object`);
  return json.result;
}

function a2aSession(o: SessionOptions): AgentSession {
  let id = 0;
  return {
    async send(turn, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const body = {
        jsonrpc: "2.0",
        id: ++id,
        method: "message/send",
        params: {
          message: { kind: "message", messageId: randomUUID(), role: "user", contextId: turn.conversationId, parts: [{ kind: "text", text: turn.message }] },
          configuration: { blocking: true, acceptedOutputModes: ["text/plain", "application/json"] },
        },
      };
      const { res, body: sent } = await post(o, body, timeoutMs);
      let result = rpcResult(parseJson(res.body, "the message/send answer"), "message/send");
      while (result.kind === "task" && isObject(result.status) && A2A_WAITING.has(String(result.status.state))) {
        const left = deadline - Date.now();
        if (left <= 250) throw new AgentCallError("unreachable", `task ${String(result.id)} still ${String(result.status.state)} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
        const poll = await post(o, { jsonrpc: "2.0", id: ++id, method: "tasks/get", params: { id: result.id } }, Math.max(250, deadline - Date.now()));
        result = rpcResult(parseJson(poll.res.body, "the tasks/get answer"), "tasks/get");
      }
      return { status: res.status, text: a2aText(result), raw: result, request: { method: "message/send", body: sent } };
    },
  };
}

// --- MCP (streamable HTTP, request/response) ----------------------------------------------------

export const MCP_PROTOCOL_VERSION = "2025-06-18";

/** The JSON-RPC response with `id` in a JSON or SSE (`data:` lines) body. */
export function mcpMessage(body: string, contentType: string, id: number): unknown {
  if (!/event-stream/i.test(contentType)) return parseJson(body, "the MCP answer");
  for (const block of body.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trimStart())
      .join("\n");
    if (!data) continue;
    try {
      const msg = JSON.parse(data) as unknown;
      if (isObject(msg) && msg.id === id) return msg;
    } catch {
      // a non-JSON event: not the response
    }
  }
  throw new AgentCallError("protocol", "the MCP event stream carried no response to the request");
}

function mcpSession(o: SessionOptions): AgentSession {
  const { tool, argument } = o.mcp!;
  let id = 0;
  let session: string | undefined;
  let ready = false;
  const headers = () => ({ accept: "application/json, text/event-stream", "mcp-protocol-version": MCP_PROTOCOL_VERSION, ...(session ? { "mcp-session-id": session } : {}) });
  const call = async (method: string, params: unknown, timeoutMs: number) => {
    const n = ++id;
    const { res, body } = await post(o, { jsonrpc: "2.0", id: n, method, params }, timeoutMs, headers());
    const header = res.headers["mcp-session-id"];
    if (typeof header === "string" && header) session = header;
    return { result: rpcResult(mcpMessage(res.body, String(res.headers["content-type"] ?? ""), n), method), status: res.status, sent: body };
  };
  return {
    async send(turn, timeoutMs) {
      if (!ready) {
        await call("initialize", { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "svc-injection-resilience", version: "1.0.0" } }, timeoutMs);
        // A notification: any 2xx will do (202 per the specification).
        await post(o, { jsonrpc: "2.0", method: "notifications/initialized" }, timeoutMs, headers());
        ready = true;
      }
      const transcript = turn.history.length
        ? `Earlier in this conversation:\n${turn.history.map((h) => `${h.role === "user" ? "User" : "Assistant"}: ${h.content}`).join("\n")}\n\nUser: ${turn.message}`
        : turn.message;
      const { result, status, sent } = await call("tools/call", { name: tool, arguments: { [argument]: transcript } }, timeoutMs);
      const content = Array.isArray(result.content) ? result.content : [];
      const texts = content.flatMap((c) => (isObject(c) && c.type === "text" && typeof c.text === "string" ? [c.text] : []));
      const text = texts.length ? texts.join("\n") : result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : "";
      return { status, text, raw: result, request: { method: "tools/call", body: sent } };
    },
  };
}

export function openSession(o: SessionOptions): AgentSession {
  if (o.protocol === "a2a") return a2aSession(o);
  if (o.protocol === "mcp") return mcpSession(o);
  return httpSession(o);
}

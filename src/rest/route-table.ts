import type { DescMethod, JsonValue } from "@bufbuild/protobuf";
import type { IncomingHttpHeaders } from "node:http";

// A REST route is either a translation of one RPC (legacy JSON in, RPC, legacy JSON out) or a
// document served from the same services (OpenAPI, agent card, readiness).

export type HttpMethod = "GET" | "POST";

export interface RestContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: JsonValue | undefined;
  headers: IncomingHttpHeaders;
  /** Absolute base URL of this server as the client reached it. */
  baseUrl: string;
}

export interface RestResult {
  status: number;
  headers?: Record<string, string>;
  /** A JSON value, or a string or bytes sent as they are with the content type from `headers`. */
  body: JsonValue | string | Buffer;
}

interface RouteCommon {
  method: HttpMethod;
  /** Path with `{name}` parameters; a parameter's name is the request field it fills. */
  path: string;
  summary: string;
  /** Credential the route takes, for the OpenAPI document. */
  auth?: "bearer" | "note" | "bearer+note" | "operator" | "x402";
  tag: string;
}

export interface RpcRoute extends RouteCommon {
  kind: "rpc";
  rpc: DescMethod;
  /** Status on success (201 for creations). */
  successStatus?: number;
  /** JSON codec: the spec's legacy JSON (default) or plain proto3 JSON (x402 facilitator API). */
  codec?: "legacy" | "proto";
  /** Builds the request JSON; default merges query (GET) or body (POST) with the path parameters. */
  request?: (ctx: RestContext) => JsonValue;
  /** Renders the response; default is the codec's JSON with `successStatus`. */
  response?: (json: JsonValue, ctx: RestContext) => RestResult;
  /**
   * The rendering reads only the RPC's answer, never the request: when the service answers with the same message
   * object again (the memoized catalog), the shim sends the bytes it rendered and encoded the first time.
   */
  stable?: boolean;
}

export interface DocumentRoute extends RouteCommon {
  kind: "document";
  handler: (ctx: RestContext) => Promise<RestResult> | RestResult;
}

export type RestRoute = RpcRoute | DocumentRoute;

interface CompiledRoute {
  route: RestRoute;
  regex: RegExp;
  names: string[];
}

export type RouteMatch =
  | { kind: "found"; route: RestRoute; params: Record<string, string> }
  | { kind: "wrong_method"; allow: HttpMethod[] }
  | { kind: "none" };

export class RouteTable {
  private readonly compiled: CompiledRoute[];

  constructor(readonly routes: readonly RestRoute[]) {
    this.compiled = routes.map((route) => {
      const names: string[] = [];
      const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{(\w+)\\?\}/g, (_m, name: string) => {
        names.push(name);
        return "([^/]+)";
      });
      return { route, regex: new RegExp(`^${pattern}$`), names };
    });
  }

  match(method: string, pathname: string): RouteMatch {
    const allow = new Set<HttpMethod>();
    // Literal segments win over parameters (`/a2a/requests/open` before `/a2a/requests/{request_id}`).
    const hits = this.compiled
      .map((c) => ({ c, m: c.regex.exec(pathname) }))
      .filter((h): h is { c: CompiledRoute; m: RegExpExecArray } => h.m !== null)
      .sort((a, b) => a.c.names.length - b.c.names.length);
    for (const { c, m } of hits) {
      const wanted = method === "HEAD" ? "GET" : method;
      if (c.route.method !== wanted) {
        allow.add(c.route.method);
        continue;
      }
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(c.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
      } catch {
        continue; // malformed percent-encoding: not this route
      }
      return { kind: "found", route: c.route, params };
    }
    return allow.size ? { kind: "wrong_method", allow: [...allow].sort() } : { kind: "none" };
  }
}

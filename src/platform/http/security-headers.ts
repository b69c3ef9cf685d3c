import type http from "node:http";
import type http2 from "node:http2";

// Security headers on every response of the one port (gRPC excepted: not a browser protocol). The
// defaults suit an API: nothing may be loaded, framed or sniffed. An HTML page that needs more (the
// passport page's hashed stylesheet) sets its own Content-Security-Policy, which replaces this one.

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

export const DEFAULT_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

const ENTRIES = Object.entries(DEFAULT_SECURITY_HEADERS);

export function withSecurityHeaders<H extends (req: any, res: any) => unknown>(handler: H): H {
  const wrapped = (req: Req, res: Res) => {
    const type = req.headers["content-type"];
    const grpc = typeof type === "string" && type.startsWith("application/grpc") && !type.startsWith("application/grpc-web");
    if (!grpc) for (let i = 0; i < ENTRIES.length; i++) res.setHeader(ENTRIES[i]![0], ENTRIES[i]![1]);
    return handler(req, res);
  };
  return wrapped as unknown as H;
}

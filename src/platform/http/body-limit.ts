import type http from "node:http";
import type http2 from "node:http2";

// Connect requests whose declared Content-Length exceeds MAX_BODY_BYTES are refused before connect-node
// reads them: 413 with a Connect error body (`resource_exhausted`, message naming `body_too_large`).
// Connect would answer 429 (its mapping of resource_exhausted), which tells a client to retry; 413 says
// not to. Streamed bodies without a length are still cut off by connect-node's readMaxBytes, and gRPC
// keeps its trailers-only resource_exhausted. REST and the MCP/A2A fronts apply the same limit themselves.

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

const CONNECT_PATH = /^\/[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)+\/[A-Za-z0-9_]+$/;

export function withBodyLimit<H extends (req: any, res: any) => unknown>(handler: H, maxBytes: number): H {
  const wrapped = (req: Req, res: Res) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (!(declared > maxBytes)) return handler(req, res); // the common case, decided without more work
    const type = String(req.headers["content-type"] ?? "");
    if (req.method === "POST" && !type.startsWith("application/grpc") && CONNECT_PATH.test((req.url ?? "/").split("?")[0]!)) {
      const body = JSON.stringify({ code: "resource_exhausted", message: `body_too_large: request body exceeds ${maxBytes} bytes` });
      const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
      if (req.httpVersionMajor === 1) headers.connection = "close"; // do not read the rest of the upload
      res.writeHead(413, headers);
      res.end(body);
      return;
    }
    return handler(req, res);
  };
  return wrapped as unknown as H;
}

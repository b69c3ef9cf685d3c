import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";
import type { AddressInfo } from "node:net";

// One port for HTTP/1.1 and cleartext HTTP/2: each connection's first bytes are peeked; the
// HTTP/2 connection preface ("PRI * HTTP/2.0") goes to the http2 server, anything else to http.
// (Node's `allowHTTP1` only works with TLS.) The http1 parser reads bytes put back with
// `unshift`; the native http2 session reads the socket handle directly and would miss them, so
// it gets a Duplex that replays the peeked bytes and then relays the socket.

/** A Duplex over `socket` whose readable side starts with `head`. */
function replaying(socket: net.Socket, head: Buffer): Duplex {
  const proxy = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  proxy.push(head);
  socket.on("data", (chunk: Buffer) => {
    if (!proxy.push(chunk)) socket.pause();
  });
  socket.on("end", () => proxy.push(null));
  socket.on("close", () => proxy.destroy());
  return proxy;
}

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface RunningServer {
  port: number;
  host: string;
  url: string;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then destroys what is left. */
  close(graceMs?: number): Promise<void>;
}

export const MAX_HEADER_BYTES = 64 * 1024;
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** Slow-client limits (HTTP_*_TIMEOUT_MS settings). */
export interface OnePortTimeouts {
  /** A client must send its first bytes and all request headers within this (else 408 / closed). */
  headersTimeoutMs: number;
  /** ...and the whole request within this (HTTP/1.1); an HTTP/2 session idle this long is closed. */
  requestTimeoutMs: number;
  /** Idle HTTP/1.1 keep-alive connections are closed after this. */
  keepAliveTimeoutMs: number;
}

export const DEFAULT_TIMEOUTS: OnePortTimeouts = { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000 };

export async function listenOnePort(handler: Handler, port: number, host: string, timeouts: OnePortTimeouts = DEFAULT_TIMEOUTS): Promise<RunningServer> {
  const { headersTimeoutMs, keepAliveTimeoutMs } = timeouts;
  const requestTimeoutMs = Math.max(timeouts.requestTimeoutMs, headersTimeoutMs);
  // 64 KB of headers: room for a payment header to be refused by the payment layer with its reason
  // (it allows 16 KB); anything larger is refused by Node with 431.
  const h1 = http.createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: headersTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      maxHeaderSize: MAX_HEADER_BYTES,
      connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(headersTimeoutMs / 4))),
    },
    handler,
  );
  // h1 never listens itself (connections are handed to it), but Node starts the connection tracking that
  // enforces headersTimeout/requestTimeout and lets closeIdleConnections() work only on 'listening'.
  h1.emit("listening");
  const h2 = http2.createServer({ settings: { maxHeaderListSize: MAX_HEADER_BYTES } }, handler);
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    // An HTTP/2 session with no open stream for requestTimeout is closed (idle, or a client trickling the
    // headers of a stream that never completes); a live server stream such as StreamProofs may stay quiet.
    let open = 0;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      idle = setTimeout(() => {
        if (open === 0) s.destroy();
      }, requestTimeoutMs).unref();
    };
    s.on("stream", (stream) => {
      open++;
      clearTimeout(idle);
      stream.once("close", () => {
        if (--open === 0) armIdle();
      });
    });
    s.once("close", () => clearTimeout(idle));
    armIdle();
  });

  // noDelay: the http2 server only sees the replaying Duplex, so it cannot turn Nagle off itself (with it
  // on, small HTTP/2 frames wait on delayed ACKs: a gRPC stream ran 11x slower).
  const tcp = net.createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    // Until the protocol is known nobody else times the connection: a client that sends nothing (or a
    // partial preface) within headersTimeout is cut off.
    socket.setTimeout(headersTimeoutMs, () => socket.destroy());
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isH2 = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && seen.length < H2_PREFACE.length) return; // could still be HTTP/2: wait for more
      socket.off("data", onData);
      socket.setTimeout(0);
      if (isH2) {
        h2.emit("connection", replaying(socket, seen));
        return;
      }
      socket.pause();
      socket.unshift(seen);
      h1.emit("connection", socket);
      socket.resume();
    };
    socket.on("data", onData);
  });

  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject);
    tcp.listen(port, host, () => resolve());
  });
  const addr = tcp.address() as AddressInfo;
  const shownHost = addr.address.includes(":") ? `[${addr.address}]` : addr.address;

  return {
    port: addr.port,
    host: addr.address,
    url: `http://${shownHost === "0.0.0.0" || shownHost === "[::]" ? "127.0.0.1" : shownHost}:${addr.port}`,
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const s of sessions) s.close(); // GOAWAY: finish open streams, accept no new ones
      h1.closeIdleConnections();
      const idle = setInterval(() => h1.closeIdleConnections(), 100);
      const deadline = setTimeout(() => {
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
      }, graceMs);
      await closed;
      clearInterval(idle);
      clearTimeout(deadline);
      h1.close(() => {}); // stops its connection-checking timer (it never listened, so no other effect)
    },
  };
}

import { gzipSync } from "node:zlib";
import type { IncomingHttpHeaders } from "node:http";
import etag from "etag";
import fresh from "fresh";
import Negotiator from "negotiator";

// Large read answers (the catalog is ~190 KB of JSON Schemas, the OpenAPI document more) get an ETag, a
// 304 for a client that already holds them (If-None-Match), and gzip for a client that accepts it. The
// gzipped bytes are kept per ETag, so a hot document is compressed once, not on every read. Small answers
// are left alone: hashing and compressing them costs more than it saves.

/** Bodies below this many bytes are sent as they are. */
export const LARGE_BODY_BYTES = 16 * 1024;
const CACHED_ENCODINGS = 32;

const gzipped = new Map<string, Buffer>();
/** The ETag of bytes sent again (a rendered-once answer is the same Buffer): hashed once. */
const tags = new WeakMap<Buffer, string>();

function gzipOnce(tag: string, bytes: Buffer): Buffer {
  let hit = gzipped.get(tag);
  if (!hit) {
    hit = gzipSync(bytes);
    if (gzipped.size >= CACHED_ENCODINGS) gzipped.delete(gzipped.keys().next().value!);
    gzipped.set(tag, hit);
  }
  return hit;
}

export interface LargeBodyAnswer {
  status: number;
  headers: Record<string, string>;
  /** Undefined for a 304. */
  body: Buffer | undefined;
}

/**
 * How to send a successful GET answer of `bytes`: as is when small, else with an ETag, as 304 when the client's
 * If-None-Match names it, gzipped when the client prefers gzip to identity. `headers` are the answer's own.
 */
export function largeBodyAnswer(req: IncomingHttpHeaders, headers: Record<string, string>, bytes: Buffer): LargeBodyAnswer {
  if (bytes.length < LARGE_BODY_BYTES) return { status: 200, headers, body: bytes };
  let tag = tags.get(bytes);
  if (!tag) tags.set(bytes, (tag = etag(bytes)));
  const out: Record<string, string> = { ...headers, etag: tag, vary: "accept-encoding" };
  if (fresh(req, { etag: tag })) return { status: 304, headers: out, body: undefined };
  if (new Negotiator({ headers: req }).encodings(["gzip", "identity"])[0] === "gzip") {
    return { status: 200, headers: { ...out, "content-encoding": "gzip" }, body: gzipOnce(tag, bytes) };
  }
  return { status: 200, headers: out, body: bytes };
}

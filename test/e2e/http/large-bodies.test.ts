import http from "node:http";
import { gunzipSync } from "node:zlib";
import { expect } from "chai";
import { LARGE_BODY_BYTES } from "../../../src/platform/http/large-body.js";
import { startTestServer, type TestServer } from "../../fixtures/test-server.js";

// Large read answers (the catalog): an ETag, 304 on If-None-Match, gzip when the client prefers it, and the
// same document in every form. Raw node:http, so the test sees the bytes on the wire (fetch would decode them).

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("large read answers: ETag, 304 and gzip", function () {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.close());

  it("sends the catalog as is to a client that asks for no encoding, with an ETag", async () => {
    const plain = await get(`${srv.url}/v1/services`);
    expect(plain.status).to.equal(200);
    expect(plain.body.length).to.be.greaterThan(LARGE_BODY_BYTES);
    expect(plain.headers["content-encoding"]).to.equal(undefined);
    expect(plain.headers.etag).to.match(/^"[0-9a-f]+-[A-Za-z0-9+/]+"$/);
    expect(plain.headers.vary).to.equal("accept-encoding");
    expect(Number(plain.headers["content-length"])).to.equal(plain.body.length);
    expect((JSON.parse(plain.body.toString("utf8")) as { services: unknown[] }).services.length).to.be.greaterThan(0);
  });

  it("gzips it for a client that accepts gzip: the same document, the same ETag, far fewer bytes", async () => {
    const plain = await get(`${srv.url}/v1/services`);
    const zipped = await get(`${srv.url}/v1/services`, { "accept-encoding": "gzip, deflate" });
    expect(zipped.status).to.equal(200);
    expect(zipped.headers["content-encoding"]).to.equal("gzip");
    expect(Number(zipped.headers["content-length"])).to.equal(zipped.body.length);
    expect(zipped.body.length).to.be.lessThan(plain.body.length / 4);
    expect(gunzipSync(zipped.body).equals(plain.body)).to.equal(true);
    expect(zipped.headers.etag).to.equal(plain.headers.etag);
    // A client that refuses gzip (q=0) gets the identity bytes.
    const refused = await get(`${srv.url}/v1/services`, { "accept-encoding": "gzip;q=0, identity" });
    expect(refused.headers["content-encoding"]).to.equal(undefined);
    expect(refused.body.equals(plain.body)).to.equal(true);
  });

  it("answers 304 with no body to a client whose If-None-Match names the current ETag, and 200 to a stale one", async () => {
    const first = await get(`${srv.url}/v1/services`);
    const again = await get(`${srv.url}/v1/services`, { "if-none-match": first.headers.etag! });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
    expect(again.headers.etag).to.equal(first.headers.etag);
    const stale = await get(`${srv.url}/v1/services`, { "if-none-match": '"0-stale"' });
    expect(stale.status).to.equal(200);
    expect(stale.body.equals(first.body)).to.equal(true);
  });

  it("HEAD gives the GET's headers and no body; small answers and errors are left alone", async () => {
    const got = await get(`${srv.url}/v1/services`, { "accept-encoding": "gzip" });
    const head = await get(`${srv.url}/v1/services`, { "accept-encoding": "gzip" }, "HEAD");
    expect(head.status).to.equal(200);
    expect(head.body.length).to.equal(0);
    expect(head.headers["content-length"]).to.equal(got.headers["content-length"]);
    expect(head.headers.etag).to.equal(got.headers.etag);
    const small = await get(`${srv.url}/v1/health`, { "accept-encoding": "gzip" });
    expect(small.headers["content-encoding"]).to.equal(undefined);
    expect(small.headers.etag).to.equal(undefined);
    const missing = await get(`${srv.url}/v1/nothing-here`, { "accept-encoding": "gzip" });
    expect(missing.status).to.equal(404);
    expect(missing.headers["content-encoding"]).to.equal(undefined);
  });
});

import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { YouTubeClient, YouTubeError, NoCaptionsError } from "../../../src/video/youtube-client.js";
import { CaptionFormatError } from "../../../src/video/captions.js";
import { PlayerResponseError } from "../../../src/video/player-response.js";
import { ASR_EN_TRACK, DE_JSON3_TRACK, MANUAL_EN_TRACK, VIDEO_ID, watchPage } from "../../fixtures/web/youtube-pages.js";

// The YouTube adapter against a local server answering like YouTube: watch pages with the embedded
// player response, timedtext tracks, and YouTube's failure modes (429, consent walls, broken tracks).

describe("video: the YouTube client against a local YouTube", function () {
  let server: http.Server;
  let base: string;
  const hits: string[] = [];
  const ids = { ok: VIDEO_ID, limited: "rateLimit01", nocap: "noCaptions1", consent: "consentWall", badxml: "badTrackXml", empty: "emptyTrack0", foreign: "foreignHost", other: "otherVideo0" };

  before(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      hits.push(url.pathname + url.search);
      const v = url.searchParams.get("v");
      const html = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
      if (url.pathname === "/watch") {
        if (v === ids.limited) return res.writeHead(429, { "content-type": "text/html" }).end("<html>Our systems have detected unusual traffic</html>");
        if (v === ids.nocap) return html(watchPage(base, { videoId: v, tracks: [] }));
        if (v === ids.consent) return html("<html><body><form action='https://consent.youtube.com/save'>Before you continue to YouTube</form></body></html>");
        if (v === ids.badxml || v === ids.empty) return html(watchPage(base, { videoId: v, tracks: [{ baseUrl: `${base}/api/timedtext?v=${v}&lang=en`, languageCode: "en" }] }));
        if (v === ids.foreign) return html(watchPage(base, { videoId: v, tracks: [{ baseUrl: "https://evil.example/api/timedtext?v=x", languageCode: "en" }] }));
        if (v === ids.other) return html(watchPage(base, { videoId: VIDEO_ID }));
        if (v === ids.ok) return html(watchPage(base));
        return html(watchPage(base, { videoId: v!, tracks: [], playability: { status: "ERROR", reason: "Video unavailable" } }));
      }
      if (url.pathname === "/api/timedtext") {
        if (v === ids.badxml) return res.writeHead(200, { "content-type": "text/xml" }).end("<transcript><text start='1'>cut off");
        if (v === ids.empty) return res.writeHead(200, { "content-type": "text/xml" }).end("");
        const lang = url.searchParams.get("lang");
        if (lang === "de") return res.writeHead(200, { "content-type": "application/json" }).end(DE_JSON3_TRACK);
        return res.writeHead(200, { "content-type": "text/xml" }).end(url.searchParams.get("kind") === "asr" ? ASR_EN_TRACK : MANUAL_EN_TRACK);
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const client = () => new YouTubeClient(base, { allow: [new URL(base).host], allowHttp: true });

  it("reads the video's details and its manual English track, then serves a repeat from the cache", async () => {
    const c = client();
    const { transcript: t, cached } = await c.transcript(VIDEO_ID, "en");
    expect(cached).to.equal(false);
    expect(t).to.deep.include({ videoId: VIDEO_ID, title: "Micropayments for software agents {explained}", channel: "Agent Commerce Talks", durationSeconds: 3725, publishDate: "2026-02-14T08:00:00-08:00" });
    expect(t.track).to.deep.include({ languageCode: "en", automatic: false, vssId: ".en", fallback: false });
    expect(t.segments).to.have.length(9);
    expect(t.trackEndpoint).to.equal(`${base}/api/timedtext`);
    expect(t.watchEndpoint).to.equal(`${base}/watch?v=${VIDEO_ID}&hl=en&bpctr=9999999999&has_verified=1`);
    const before = hits.length;
    expect((await c.transcript(VIDEO_ID, "en")).cached).to.equal(true);
    expect(hits.length).to.equal(before);
  });

  it("resolves a relative track URL against the base and reads json3", async () => {
    const { transcript: t } = await client().transcript(VIDEO_ID, "de");
    expect(t.track).to.deep.include({ languageCode: "de", name: "German", automatic: false });
    expect(t.segments[1]!.text).to.equal("für Software-Agenten & APIs.");
  });

  it("fails with a reason on 429, consent walls, missing captions, broken or empty tracks, foreign hosts and the wrong video", async () => {
    const failure = async (id: string) => {
      try {
        await client().transcript(id, "en");
      } catch (err) {
        return err as Error;
      }
      throw new Error(`${id} did not fail`);
    };
    expect(await failure(ids.limited)).to.be.instanceOf(YouTubeError).and.have.property("message").that.contains("HTTP 429");
    expect(await failure(ids.consent)).to.be.instanceOf(PlayerResponseError);
    expect(await failure(ids.nocap)).to.be.instanceOf(NoCaptionsError);
    const unavailable = await failure("unavailabl1");
    expect(unavailable).to.be.instanceOf(NoCaptionsError);
    expect(unavailable.message).to.contain("ERROR: Video unavailable");
    expect(await failure(ids.badxml)).to.be.instanceOf(CaptionFormatError);
    expect(await failure(ids.empty)).to.be.instanceOf(CaptionFormatError).and.have.property("message").that.contains("empty");
    expect(await failure(ids.foreign)).to.be.instanceOf(YouTubeError).and.have.property("message").that.contains("unexpected host");
    expect(await failure(ids.other)).to.be.instanceOf(YouTubeError).and.have.property("message").that.contains("not otherVideo0");
  });
});

import { expect } from "chai";
import { z } from "zod";
import { CaptionFormatError, decodeEntities, parseCaptions } from "../../../src/video/captions.js";
import { chooseTrack, playerResponseOf, PlayerResponseError, type CaptionTrack } from "../../../src/video/player-response.js";
import { extractiveSummary, keyPassages, passagesOfTranscript } from "../../../src/video/transcript-report.js";
import { timestampOf, videoIdOf } from "../../../src/video/video-id.js";
import { YouTubeResearchOutput } from "../../../src/skus/content-youtube-research.js";
import { ASR_EN_TRACK, DE_JSON3_TRACK, MANUAL_EN_TRACK, VIDEO_ID, watchPage } from "../../fixtures/web/youtube-pages.js";

describe("video: ids, the player response, caption tracks and the transcript report", () => {
  it("takes the video id from watch?v=, youtu.be/, shorts/, embed/ and live/ URLs or a bare id, and nothing else", () => {
    for (const url of [
      `https://www.youtube.com/watch?v=${VIDEO_ID}`,
      `https://m.youtube.com/watch?feature=share&v=${VIDEO_ID}&t=42s`,
      `https://youtu.be/${VIDEO_ID}?si=abc`,
      `https://www.youtube.com/shorts/${VIDEO_ID}`,
      `https://www.youtube-nocookie.com/embed/${VIDEO_ID}`,
      `https://youtube.com/live/${VIDEO_ID}`,
      VIDEO_ID,
    ]) {
      expect(videoIdOf(url), url).to.equal(VIDEO_ID);
    }
    for (const bad of ["https://vimeo.com/123456789", "https://www.youtube.com/watch?v=short", "https://www.youtube.com/channel/UCx0L2ZdYfiq", "https://evil.example/watch?v=aqz-KE-bpKQ", "ftp://youtu.be/aqz-KE-bpKQ", "not a url"]) {
      expect(videoIdOf(bad), bad).to.equal(undefined);
    }
  });

  it("formats timestamps as mm:ss, and hh:mm:ss from one hour on", () => {
    expect(timestampOf(0)).to.equal("00:00");
    expect(timestampOf(75.9)).to.equal("01:15");
    expect(timestampOf(3599)).to.equal("59:59");
    expect(timestampOf(3661)).to.equal("01:01:01");
  });

  it("finds ytInitialPlayerResponse in a watch page (braces inside strings, \\u0026 escapes) and refuses pages without one", () => {
    const player = playerResponseOf(watchPage("https://www.youtube.com"));
    expect(player.videoDetails).to.deep.include({ videoId: VIDEO_ID, title: "Micropayments for software agents {explained}", author: "Agent Commerce Talks", lengthSeconds: "3725" });
    const tracks = player.captions!.playerCaptionsTracklistRenderer!.captionTracks!;
    expect(tracks).to.have.length(3);
    expect(tracks[0]!.baseUrl).to.contain("&caps=asr&");
    expect(() => playerResponseOf("<html><body>Before you continue to YouTube</body></html>")).to.throw(PlayerResponseError, /no ytInitialPlayerResponse/);
    expect(() => playerResponseOf("<script>var ytInitialPlayerResponse = {\"videoDetails\": {\"videoId\": 1</script>")).to.throw(PlayerResponseError, /truncated/);
    expect(() => playerResponseOf("<script>var ytInitialPlayerResponse = {videoDetails: 1};</script>")).to.throw(PlayerResponseError, /not valid JSON/);
    expect(() => playerResponseOf('<script>var ytInitialPlayerResponse = {"videoDetails": {"videoId": 7}};</script>')).to.throw(PlayerResponseError, /malformed/);
  });

  it("chooses the requested language, manual captions before automatic ones, and falls back to any track", () => {
    const t = (languageCode: string, kind?: string): CaptionTrack => ({ baseUrl: `/t/${languageCode}/${kind ?? "manual"}`, languageCode, kind });
    const tracks = [t("en", "asr"), t("en"), t("de"), t("pt-BR", "asr"), t("pt")];
    expect(chooseTrack(tracks, "en")).to.deep.equal({ track: t("en"), fallback: false });
    expect(chooseTrack(tracks, "en-GB")).to.deep.equal({ track: t("en"), fallback: false });
    expect(chooseTrack(tracks, "pt-BR")).to.deep.equal({ track: t("pt"), fallback: false }); // manual pt before automatic pt-BR
    expect(chooseTrack([t("en", "asr"), t("pt-BR", "asr")], "pt-BR")).to.deep.equal({ track: t("pt-BR", "asr"), fallback: false });
    expect(chooseTrack(tracks, "ja")).to.deep.equal({ track: t("en"), fallback: true });
    expect(chooseTrack([t("en", "asr")], "ja")).to.deep.equal({ track: t("en", "asr"), fallback: true });
    expect(chooseTrack([], "en")).to.equal(undefined);
  });

  it("parses format 1 (<transcript>, doubly escaped text), format 3 (<timedtext>, word cues in ms) and json3", () => {
    const manual = parseCaptions(MANUAL_EN_TRACK);
    expect(manual[0]).to.deep.equal({ start: 0.32, duration: 3.1, text: "Welcome! Today we're talking about paying software agents per call." });
    expect(manual[1]!.text).to.equal("Most APIs still sell monthly subscriptions & API keys.");
    const asr = parseCaptions(ASR_EN_TRACK);
    expect(asr).to.deep.equal([
      { start: 0.32, duration: 3.1, text: "welcome today we talk" },
      { start: 35, duration: 4.4, text: "x402 uses status 402" },
    ]);
    const de = parseCaptions(DE_JSON3_TRACK);
    expect(de).to.deep.equal([
      { start: 0.32, duration: 3.1, text: "Willkommen! Heute geht es um Zahlungen" },
      { start: 3.6, duration: 4.2, text: "für Software-Agenten & APIs." },
    ]);
    expect(decodeEntities("&lt;b&gt; &#x27;quoted&#39; &amp;amp;")).to.equal("<b> 'quoted' &");
  });

  it("refuses malformed tracks", () => {
    expect(() => parseCaptions("")).to.throw(CaptionFormatError, /empty/);
    expect(() => parseCaptions("<transcript><text start='1'>open")).to.throw(CaptionFormatError, /well-formed/);
    expect(() => parseCaptions("<html><body>nope</body></html>")).to.throw(CaptionFormatError, /neither/);
    expect(() => parseCaptions("{\"events\": 3}")).to.throw(CaptionFormatError, /no events/);
    expect(() => parseCaptions("{broken")).to.throw(CaptionFormatError, /not valid JSON/);
  });

  it("groups cues into ~30-second passages, ranks them against the topic and summarizes by frequent terms", () => {
    const passages = passagesOfTranscript(parseCaptions(MANUAL_EN_TRACK));
    expect(passages.map((p) => p.timestamp)).to.deep.equal(["00:00", "00:35", "01:10", "30:10", "01:01:01"]);
    const key = keyPassages(passages, "how does the nonce make a payment settle exactly once", 3);
    expect(key.passages[0]!.timestamp).to.equal("01:10");
    expect(key.passages[0]!.text).to.contain("settle exactly once");
    for (let i = 1; i < key.passages.length; i++) expect(key.passages[i]!.start).to.be.greaterThan(key.passages[i - 1]!.start);
    expect(keyPassages(passages, "volcanoes and glaciers", 3).passages).to.deep.equal([]);
    const summary = extractiveSummary(passages);
    expect(summary.top_terms).to.include("payment");
    expect(summary.passages.length).to.be.within(1, 5);
  });

  it("the output schema converts to JSON Schema for the catalog", () => {
    expect((z.toJSONSchema(YouTubeResearchOutput) as { properties: object }).properties).to.include.keys("transcript", "key_passages", "summary", "content_markdown");
  });
});

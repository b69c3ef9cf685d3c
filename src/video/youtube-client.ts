import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { parseCaptions, type CaptionSegment } from "./captions.js";
import { chooseTrack, isAutomatic, playerResponseOf, trackName, type PlayerResponse } from "./player-response.js";

// YouTube read the way a browser does, with no API key: the watch page (its embedded player response
// names the video and lists the caption tracks), then the chosen track from the timedtext endpoint.
// The base URL is configurable (YOUTUBE_URL) so tests serve both from a local server. A transcript is
// cached for ten minutes per (video, language).

export const TRANSCRIPT_CACHE_MS = 10 * 60_000;
const TIMEOUT_MS = 15_000;
const MAX_BYTES = 4 * 1024 * 1024;
// YouTube serves its full watch page to browsers; the consent cookies skip the EU consent interstitial.
const HEADERS = {
  "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
  "accept-language": "en-US,en;q=0.9",
  cookie: "CONSENT=YES+cb; SOCS=CAI",
};

export class YouTubeError extends Error {}
/** The video exists but has no caption track to read. */
export class NoCaptionsError extends YouTubeError {}

export interface VideoTranscript {
  videoId: string;
  title: string;
  channel: string | null;
  channelId: string | null;
  durationSeconds: number | null;
  publishDate: string | null;
  isLive: boolean;
  track: { languageCode: string; name: string | null; automatic: boolean; vssId: string | null; fallback: boolean };
  segments: CaptionSegment[];
  watchEndpoint: string;
  trackEndpoint: string;
  fetchedAt: Date;
}

export class YouTubeClient {
  private readonly cache = new Map<string, VideoTranscript>();

  constructor(
    readonly baseUrl: string,
    private readonly policy: SafeFetchPolicy,
  ) {}

  get origin(): string {
    return new URL(this.baseUrl).origin;
  }

  private async get(url: string, what: string): Promise<string> {
    const res = await safeRequest(url, { method: "GET", timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, headers: HEADERS }, this.policy);
    if (res.status === 429) throw new YouTubeError(`YouTube rate-limited the ${what} request (HTTP 429)`);
    if (res.status !== 200) throw new YouTubeError(`YouTube answered HTTP ${res.status} for the ${what}`);
    return res.body;
  }

  /** The caption track's URL, resolved against the base; only YouTube's own hosts are fetched. */
  private trackUrl(baseUrl: string): string {
    const url = new URL(baseUrl, `${this.baseUrl}/`);
    const base = new URL(this.baseUrl);
    if (url.host !== base.host && !/(^|\.)youtube\.com$/i.test(url.hostname)) throw new YouTubeError(`the caption track is on an unexpected host (${url.host})`);
    return url.toString();
  }

  async transcript(videoId: string, lang: string, now = Date.now()): Promise<{ transcript: VideoTranscript; cached: boolean }> {
    const key = `${videoId}|${lang.toLowerCase()}`;
    const hit = this.cache.get(key);
    if (hit && now - hit.fetchedAt.getTime() < TRANSCRIPT_CACHE_MS) return { transcript: hit, cached: true };
    const watchEndpoint = `${this.baseUrl}/watch?v=${encodeURIComponent(videoId)}&hl=en&bpctr=9999999999&has_verified=1`;
    const player: PlayerResponse = playerResponseOf(await this.get(watchEndpoint, "watch page"));
    const details = player.videoDetails;
    const status = player.playabilityStatus;
    const tracks = player.captions?.playerCaptionsTracklistRenderer?.captionTracks ?? [];
    if (!details) throw new YouTubeError(`YouTube has no video ${videoId}${status ? ` (${status.status}${status.reason ? `: ${status.reason}` : ""})` : ""}`);
    if (details.videoId !== videoId) throw new YouTubeError(`the watch page describes video ${details.videoId}, not ${videoId}`);
    const chosen = chooseTrack(tracks, lang);
    if (!chosen) throw new NoCaptionsError(`video ${videoId} has no caption track${status && status.status !== "OK" ? ` (${status.status}${status.reason ? `: ${status.reason}` : ""})` : ""}`);
    const trackEndpoint = this.trackUrl(chosen.track.baseUrl);
    const segments = parseCaptions(await this.get(trackEndpoint, "caption track"));
    if (!segments.length) throw new NoCaptionsError(`the caption track of video ${videoId} has no text`);
    const micro = player.microformat?.playerMicroformatRenderer;
    const transcript: VideoTranscript = {
      videoId,
      title: details.title,
      channel: details.author ?? micro?.ownerChannelName ?? null,
      channelId: details.channelId ?? null,
      durationSeconds: details.lengthSeconds ? Number(details.lengthSeconds) : null,
      publishDate: micro?.publishDate ?? micro?.uploadDate ?? null,
      isLive: details.isLiveContent ?? false,
      track: { languageCode: chosen.track.languageCode, name: trackName(chosen.track), automatic: isAutomatic(chosen.track), vssId: chosen.track.vssId ?? null, fallback: chosen.fallback },
      segments,
      watchEndpoint,
      // The signed query of a track URL is not worth keeping: the path names the endpoint.
      trackEndpoint: trackEndpoint.split("?")[0]!,
      fetchedAt: new Date(now),
    };
    this.cache.set(key, transcript);
    return { transcript, cached: false };
  }
}

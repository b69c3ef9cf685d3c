import { z } from "zod";
import { scanContent } from "../trust/content-scan.js";
import { extractiveSummary, keyPassages, passagesOfTranscript, WINDOW_SECONDS } from "../video/transcript-report.js";
import { timestampOf, videoIdOf } from "../video/video-id.js";
import { NoCaptionsError, type VideoTranscript, type YouTubeClient } from "../video/youtube-client.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";

// content.youtube-research (async): a research report on one YouTube video from its caption track:
// title, channel, duration, the timestamped transcript, the passages on the `task` topic with their
// timestamps, and an extractive summary (video/transcript-report.ts). The video id is checked before
// any charge. A video without captions is refused as `no_captions`, a transcript or title that trips
// the content-trap scan as `content_trap` (both refunded at once); YouTube failing fails the attempt
// (retried by the worker, then refunded).

const SUMMARY_DESC = "passages densest in the transcript's most frequent terms (Luhn-style), in time order";
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`)\]]+/i;

const Input = z
  .object({
    url: z.string().max(2048).optional(),
    urls: z.array(z.string().max(2048)).length(1, "exactly one video URL").optional(),
    video_id: z.string().optional(),
    task: z.string().max(2000).optional(),
    lang: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "a language code like en or pt-BR")
      .default("en"),
    max_passages: z.number().int().min(1).max(20).default(5),
  })
  .loose();
type Input = z.infer<typeof Input>;

/** The video URL or id the buyer named: `url`, `urls[0]`, `video_id`, or the first URL in `task`. */
function videoRef(v: Input): string | undefined {
  return v.url ?? v.urls?.[0] ?? v.video_id ?? v.task?.match(URL_IN_TEXT)?.[0]?.replace(/[.,;:!?]+$/, "");
}

/** The topic: the task, without the video URL when the URL was written in it. */
function topicOf(v: Input): string {
  return (v.task ?? "").replace(URL_IN_TEXT, " ").replace(/\s+/g, " ").trim();
}

const Passage = z.object({ start_seconds: z.number(), end_seconds: z.number(), timestamp: z.string().describe("mm:ss, or hh:mm:ss from one hour on"), text: z.string(), url: z.string() });

export const YouTubeResearchOutput = z.object({
  video_id: z.string(),
  url: z.string(),
  title: z.string(),
  channel: z.string().nullable(),
  channel_id: z.string().nullable(),
  duration_seconds: z.number().int().nullable(),
  duration: z.string().nullable(),
  publish_date: z.string().nullable(),
  topic: z.string().nullable(),
  caption_track: z.object({ language: z.string(), name: z.string().nullable(), automatic: z.boolean(), requested_language: z.string(), language_fallback: z.boolean() }),
  summary: z.object({ method: z.string(), top_terms: z.array(z.string()), passages: z.array(Passage) }),
  key_passages: z.object({ method: z.string(), query_terms: z.array(z.string()), passages: z.array(Passage.extend({ score: z.number(), matched_terms: z.array(z.string()) })) }),
  transcript: z.array(z.object({ start_seconds: z.number(), duration_seconds: z.number(), timestamp: z.string(), text: z.string() })),
  transcript_words: z.number().int(),
  content_markdown: z.string(),
  source: z.object({ name: z.literal("YouTube"), watch_endpoint: z.string(), caption_endpoint: z.string(), fetched_at: z.string(), cached: z.boolean() }),
});

function report(t: VideoTranscript, topic: string, lang: string, max: number, cached: boolean) {
  const watch = `https://www.youtube.com/watch?v=${t.videoId}`;
  const at = (s: number) => `${watch}&t=${Math.floor(s)}s`;
  const windows = passagesOfTranscript(t.segments);
  const key = keyPassages(windows, topic, max);
  const summary = extractiveSummary(windows);
  const asPassage = (p: { start: number; end: number; timestamp: string; text: string }) => ({ start_seconds: p.start, end_seconds: p.end, timestamp: p.timestamp, text: p.text, url: at(p.start) });
  const duration = t.durationSeconds === null ? null : timestampOf(t.durationSeconds);
  const md: string[] = [`# ${t.title}`, "", `- Channel: ${t.channel ?? "unknown"}`, `- Duration: ${duration ?? "unknown"}`, `- Video: ${watch}`, `- Captions: ${t.track.name ?? t.track.languageCode}${t.track.automatic ? " (automatic)" : ""}`, ""];
  if (topic) {
    md.push(`## On "${topic}"`, "");
    if (key.passages.length) for (const p of key.passages) md.push(`- [${p.timestamp}](${at(p.start)}) ${p.text}`);
    else md.push("No passage of the transcript addresses this topic.");
    md.push("");
  }
  md.push("## Summary (extracted)", "", ...summary.passages.map((p) => `- [${p.timestamp}](${at(p.start)}) ${p.text}`), "", "## Transcript", "");
  for (const s of t.segments) md.push(`[${timestampOf(s.start)}] ${s.text}  `);
  return {
    video_id: t.videoId,
    url: watch,
    title: t.title,
    channel: t.channel,
    channel_id: t.channelId,
    duration_seconds: t.durationSeconds,
    duration,
    publish_date: t.publishDate,
    topic: topic || null,
    caption_track: { language: t.track.languageCode, name: t.track.name, automatic: t.track.automatic, requested_language: lang, language_fallback: t.track.fallback },
    summary: { method: `extractive: the ${SUMMARY_DESC}`, top_terms: summary.top_terms, passages: summary.passages.map(asPassage) },
    key_passages: {
      method: `Okapi BM25 of ${WINDOW_SECONDS}-second transcript passages against the topic`,
      query_terms: key.query_terms,
      passages: key.passages.map((p) => ({ ...asPassage(p), score: p.score, matched_terms: p.matched_terms })),
    },
    transcript: t.segments.map((s) => ({ start_seconds: s.start, duration_seconds: s.duration, timestamp: timestampOf(s.start), text: s.text })),
    transcript_words: t.segments.reduce((n, s) => n + s.text.split(/\s+/).filter(Boolean).length, 0),
    content_markdown: `${md.join("\n").trim()}\n`,
    source: { name: "YouTube" as const, watch_endpoint: t.watchEndpoint, caption_endpoint: t.trackEndpoint, fetched_at: t.fetchedAt.toISOString(), cached },
  };
}

export function contentYoutubeResearch(youtube: YouTubeClient): SkuHandler<Input> {
  const input = Input.superRefine((v, ctx) => {
    const ref = videoRef(v);
    if (!ref) return ctx.addIssue({ code: "custom", path: ["url"], message: "a YouTube video URL is required (url, urls, video_id or in task)" });
    if (!videoIdOf(ref)) ctx.addIssue({ code: "custom", path: [v.url !== undefined ? "url" : v.urls ? "urls" : v.video_id !== undefined ? "video_id" : "task"], message: `${ref.slice(0, 200)} is not a YouTube video (watch?v=, youtu.be/ or shorts/ URL, or an 11-character id)` });
  });
  return {
    skuId: "content.youtube-research",
    poweredBy: "svc-video/youtube-captions",
    input,
    output: YouTubeResearchOutput,
    upstreams: () => [youtube.origin],
    async run(v) {
      const id = videoIdOf(videoRef(v)!)!;
      const { transcript, cached } = await youtube.transcript(id, v.lang).catch((err: unknown) => {
        // No captions will not change on a retry: refused (and refunded) at once; other failures are retried.
        throw err instanceof NoCaptionsError ? new SkuRefusal("no_captions", err.message) : err;
      });
      const flagged = scanContent([transcript.title, ...transcript.segments.map((s) => s.text)]);
      if (flagged.length) throw new SkuRefusal("content_trap", `the transcript of video ${id} trips the content-trap scan (rules: ${flagged.join(", ")})`);
      return report(transcript, topicOf(v), v.lang, v.max_passages, cached);
    },
  };
}

import { z } from "zod";

// The player response a YouTube watch page embeds (`var ytInitialPlayerResponse = {...};`): the
// video's details, its playability, and its caption tracks
// (captions.playerCaptionsTracklistRenderer.captionTracks[]: baseUrl, languageCode, kind "asr" for
// automatic captions, name, vssId).

const Text = z.union([z.object({ simpleText: z.string() }), z.object({ runs: z.array(z.object({ text: z.string() })) })]);

export const CaptionTrack = z.object({
  baseUrl: z.string().min(1),
  languageCode: z.string().min(1),
  kind: z.string().optional(),
  name: Text.optional(),
  vssId: z.string().optional(),
  isTranslatable: z.boolean().optional(),
});
export type CaptionTrack = z.infer<typeof CaptionTrack>;

export const PlayerResponse = z.object({
  playabilityStatus: z.object({ status: z.string(), reason: z.string().optional() }).loose().optional(),
  videoDetails: z
    .object({
      videoId: z.string(),
      title: z.string(),
      lengthSeconds: z.string().regex(/^\d+$/).optional(),
      channelId: z.string().optional(),
      author: z.string().optional(),
      isLiveContent: z.boolean().optional(),
    })
    .loose()
    .optional(),
  captions: z
    .object({ playerCaptionsTracklistRenderer: z.object({ captionTracks: z.array(CaptionTrack).optional() }).loose().optional() })
    .loose()
    .optional(),
  microformat: z
    .object({ playerMicroformatRenderer: z.object({ publishDate: z.string().optional(), uploadDate: z.string().optional(), ownerChannelName: z.string().optional() }).loose().optional() })
    .loose()
    .optional(),
});
export type PlayerResponse = z.infer<typeof PlayerResponse>;

export class PlayerResponseError extends Error {}

/** The JSON object that starts at `from` (a '{'), read with string awareness; undefined if unbalanced. */
function balancedObject(text: string, from: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(from, i + 1);
  }
  return undefined;
}

/** Finds and parses ytInitialPlayerResponse in a watch page. */
export function playerResponseOf(html: string): PlayerResponse {
  const marker = /ytInitialPlayerResponse\s*=\s*\{/g;
  const m = marker.exec(html);
  if (!m) throw new PlayerResponseError("the watch page carries no ytInitialPlayerResponse (a consent or bot-check page?)");
  const raw = balancedObject(html, m.index + m[0].length - 1);
  if (!raw) throw new PlayerResponseError("ytInitialPlayerResponse is truncated");
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new PlayerResponseError("ytInitialPlayerResponse is not valid JSON");
  }
  const parsed = PlayerResponse.safeParse(json);
  if (!parsed.success) throw new PlayerResponseError(`ytInitialPlayerResponse is malformed: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

export const trackName = (t: CaptionTrack): string | null => (t.name ? ("simpleText" in t.name ? t.name.simpleText : t.name.runs.map((r) => r.text).join("")) : null);
export const isAutomatic = (t: CaptionTrack) => t.kind === "asr";

/**
 * The track to read: one in the requested language (its exact code before the same primary language),
 * manual captions before automatic ones; without a track in that language, any manual track, then any
 * automatic one (reported as a fallback).
 */
export function chooseTrack(tracks: readonly CaptionTrack[], lang: string): { track: CaptionTrack; fallback: boolean } | undefined {
  const want = lang.toLowerCase();
  const primary = want.split("-")[0]!;
  const code = (t: CaptionTrack) => t.languageCode.toLowerCase();
  const exact = tracks.filter((t) => code(t) === want);
  const related = tracks.filter((t) => code(t) !== want && code(t).split("-")[0] === primary);
  const ordered = [...exact, ...related];
  const inLanguage = ordered.find((t) => !isAutomatic(t)) ?? ordered.find(isAutomatic);
  if (inLanguage) return { track: inLanguage, fallback: false };
  const any = tracks.find((t) => !isAutomatic(t)) ?? tracks.find(isAutomatic);
  return any && { track: any, fallback: true };
}

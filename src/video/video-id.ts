// YouTube video ids from the URL forms people paste: watch?v=ID, youtu.be/ID, shorts/ID, embed/ID,
// live/ID (www., m. and music. hosts, youtube-nocookie.com), or a bare 11-character id.

export const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;

export function videoIdOf(raw: string): string | undefined {
  const s = raw.trim();
  if (VIDEO_ID.test(s)) return s;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return undefined;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  const host = url.hostname.toLowerCase().replace(/^(www|m|music)\./, "");
  let id: string | undefined;
  if (host === "youtu.be") id = url.pathname.split("/")[1];
  else if (host === "youtube.com" || host === "youtube-nocookie.com") {
    if (url.pathname === "/watch") id = url.searchParams.get("v") ?? undefined;
    else id = /^\/(?:shorts|embed|live|v)\/([^/?#]+)/.exec(url.pathname)?.[1];
  }
  return id && VIDEO_ID.test(id) ? id : undefined;
}

/** A position in seconds as mm:ss, or hh:mm:ss from one hour on. */
export function timestampOf(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  return hh ? `${two(hh)}:${two(mm)}:${two(ss)}` : `${two(mm)}:${two(ss)}`;
}

import { normalizeMintUrl } from "@cashu/cashu-ts";

// The operator's list of trusted Cashu mints (CASHU_MINTS). A token is only ever sent to a mint on this
// list: an untrusted mint URL is never loaded. URLs are compared in cashu-ts's normal form (lower-case
// host, default port dropped, no trailing slash), the form wallets and tokens use.

/** The normal form of a mint URL; undefined when it is not a usable mint URL (scheme, credentials, query...). */
export function normalMintUrl(raw: string): string | undefined {
  try {
    return normalizeMintUrl(raw.trim());
  } catch {
    return undefined;
  }
}

/** Parses a comma-separated list; throws naming the first entry that is not a mint URL. */
export function parseMintList(raw: string): string[] {
  const out: string[] = [];
  for (const entry of raw.split(",").map((s) => s.trim()).filter(Boolean)) {
    const url = normalMintUrl(entry);
    if (!url) throw new Error(`not a mint URL: ${entry}`);
    if (!out.includes(url)) out.push(url);
  }
  return out;
}

/** zod refinement of CASHU_MINTS. */
export function isMintList(raw: string): boolean {
  try {
    parseMintList(raw);
    return true;
  } catch {
    return false;
  }
}

// The canonical form of an article URL, so one story reached through different tracking links is one
// item: host lower-cased, default port and fragment dropped, tracking parameters removed (utm_*, click
// ids, newsletter and referral tags listed below), the remaining query sorted, a trailing slash
// dropped. The dedup key further ignores the scheme and a leading `www.`.

const TRACKING_PARAMS = new Set([
  "fbclid", "gclid", "gclsrc", "dclid", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id", "igshid", "mc_cid", "mc_eid",
  "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "wickedid", "ocid", "cmpid", "cmp",
  "smid", "smtyp", "taid", "ito", "at_medium", "at_campaign", "at_custom1", "at_custom2", "at_custom3", "at_custom4",
  "ref", "ref_src", "ref_url", "referrer", "guccounter", "guce_referrer", "guce_referrer_sig", "rssfeed", "spref",
  "ns_mchannel", "ns_source", "ns_campaign", "ns_linkname", "ns_fee", "sr_share", "__twitter_impression", "s_cid",
  "soc_src", "soc_trk", "tpcc", "traffic_source", "xtor",
]);

function isTracking(name: string): boolean {
  const n = name.toLowerCase();
  return n.startsWith("utm_") || n.startsWith("pk_") || n.startsWith("mtm_") || TRACKING_PARAMS.has(n);
}

/** The canonical URL, or the input unchanged when it does not parse. */
export function canonicalUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return raw.trim();
  }
  u.hash = "";
  u.hostname = u.hostname.toLowerCase();
  const kept = [...u.searchParams.entries()].filter(([k]) => !isTracking(k)).sort(([a, av], [b, bv]) => (a === b ? av.localeCompare(bv) : a.localeCompare(b)));
  u.search = kept.length ? `?${new URLSearchParams(kept).toString()}` : "";
  if (u.pathname.length > 1 && u.pathname.endsWith("/")) u.pathname = u.pathname.replace(/\/+$/, "");
  return u.toString();
}

/** The key two copies of one article share: the canonical URL without scheme and `www.`. */
export function urlKey(raw: string): string {
  return canonicalUrl(raw).replace(/^https?:\/\//i, "").replace(/^www\./i, "");
}

/** The key two outlets' copies of one headline share: lower case, letters and digits only, single spaces. */
export function titleKey(title: string): string {
  return title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

import { titleKey } from "./canonical-url.js";

// Topic matching, documented for buyers:
//   - A topic is one or more alternatives separated by ` OR ` (or `|`); an item matches when it
//     matches any alternative.
//   - An alternative is a list of terms; an item matches it when EVERY term occurs in the item's
//     title or summary. A "quoted phrase" is one term; other words are terms on their own.
//   - Matching is case- and accent-insensitive, on whole words (punctuation counts as a space), and a
//     term also matches its plural with -s/-es ("stablecoin" matches "stablecoins").
//   - Common English words (the, of, news, latest...) are not terms; a topic left with no term is
//     refused as bad input.
//   - A ticker (crypto assets) matches the asset's name or its ticker: BTC is "bitcoin OR btc".

const STOPWORDS = new Set(
  ("a an and are as at be by for from has have how in into is it its of on or over the their this to was were what when where which who why will with " +
    "about after before latest news today recent sentiment scan find search show get give me please headlines articles stories coverage").split(" "),
);

export interface TopicQuery {
  /** The topic as the buyer wrote it. */
  topic: string;
  /** Alternatives (OR) of terms (AND), normalized. */
  alternatives: string[][];
}

export function parseTopic(topic: string): TopicQuery {
  const alternatives = topic
    .split(/\s+OR\s+|\|/)
    .map((alt) => {
      const terms: string[] = [];
      const rest = alt.replace(/"([^"]+)"/g, (_, phrase: string) => {
        const t = titleKey(phrase);
        if (t) terms.push(t);
        return " ";
      });
      for (const w of titleKey(rest).split(" ")) if (w && !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w))) terms.push(w);
      return [...new Set(terms)];
    })
    .filter((terms) => terms.length > 0);
  return { topic, alternatives };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const patterns = new Map<string, RegExp>();

function termPattern(term: string): RegExp {
  let p = patterns.get(term);
  if (!p) {
    p = new RegExp(`(?:^| )${escape(term)}(?:s|es)?(?= |$)`);
    if (patterns.size > 10_000) patterns.clear();
    patterns.set(term, p);
  }
  return p;
}

export interface TopicMatch {
  /** The alternative that matched (its terms). */
  terms: string[];
  /** Where the terms were found: all in the title, or with the help of the summary. */
  matched_in: "title" | "title_and_summary";
}

/** Whether an item (title, summary) matches the topic, and how. */
export function matchTopic(q: TopicQuery, title: string, summary: string): TopicMatch | undefined {
  const t = titleKey(title);
  const both = `${t} ${titleKey(summary)}`;
  let best: TopicMatch | undefined;
  for (const terms of q.alternatives) {
    if (terms.every((term) => termPattern(term).test(t))) return { terms, matched_in: "title" };
    if (!best && terms.every((term) => termPattern(term).test(both))) best = { terms, matched_in: "title_and_summary" };
  }
  return best;
}

// The names news outlets use for the assets buyers most often ask about, by ticker.
const ASSET_NAMES: Record<string, string[]> = {
  BTC: ["bitcoin"], XBT: ["bitcoin"], ETH: ["ethereum", "ether"], SOL: ["solana"], XRP: ["xrp", "ripple"], ADA: ["cardano"],
  DOGE: ["dogecoin"], DOT: ["polkadot"], AVAX: ["avalanche"], LINK: ["chainlink"], LTC: ["litecoin"], BCH: ["bitcoin cash"],
  TRX: ["tron"], TON: ["toncoin"], MATIC: ["polygon"], POL: ["polygon"], ATOM: ["cosmos"], XLM: ["stellar"], UNI: ["uniswap"],
  USDT: ["tether"], USDC: ["usd coin", "circle"], BNB: ["bnb", "binance coin"], SHIB: ["shiba inu"], NEAR: ["near protocol"],
  ARB: ["arbitrum"], OP: ["optimism"], APT: ["aptos"], SUI: ["sui"], XMR: ["monero"], ETC: ["ethereum classic"], FIL: ["filecoin"],
};

/** Whether news outlets have a known name for this ticker (BTC, ETH...). */
export function isKnownTicker(ticker: string): boolean {
  return Object.hasOwn(ASSET_NAMES, ticker.toUpperCase());
}

/** The topic for a crypto asset: its names and its ticker. */
export function assetTopic(ticker: string): TopicQuery {
  const t = ticker.toUpperCase();
  const names = ASSET_NAMES[t] ?? [];
  const alternatives = [...new Set([...names.map((n) => titleKey(n)), titleKey(t)])].map((term) => [term]);
  return { topic: [...names, t].join(" OR "), alternatives };
}

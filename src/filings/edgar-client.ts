import { z } from "zod";
import { safeRequest, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";

// SEC EDGAR's public JSON: the ticker map (www.sec.gov/files/company_tickers.json) and a company's
// submissions (data.sec.gov/submissions/CIK##########.json). EDGAR refuses requests without a
// User-Agent naming the requester, so the operator configures one. The ticker map is cached for ten
// minutes, submissions for one.

const TICKERS_TTL_MS = 10 * 60_000;
const SUBMISSIONS_TTL_MS = 60_000;

const TickerMap = z.record(z.string(), z.object({ cik_str: z.number().int(), ticker: z.string(), title: z.string() }));
const Submissions = z.object({
  cik: z.union([z.string(), z.number()]),
  name: z.string(),
  tickers: z.array(z.string()).default([]),
  filings: z.object({
    recent: z.object({
      accessionNumber: z.array(z.string()),
      filingDate: z.array(z.string()),
      reportDate: z.array(z.string()),
      form: z.array(z.string()),
      primaryDocument: z.array(z.string()),
      primaryDocDescription: z.array(z.string()).default([]),
    }),
  }),
});

export type CompanySubmissions = z.infer<typeof Submissions>;

export class EdgarError extends Error {}

export interface EdgarUrls {
  www: string;
  data: string;
}

export class EdgarClient {
  private tickers: { at: number; map: Map<string, { cik: number; title: string }> } | undefined;
  private readonly submissions = new Map<number, { at: number; body: CompanySubmissions; endpoint: string }>();

  constructor(
    readonly urls: EdgarUrls,
    private readonly userAgent: string,
    private readonly policy: SafeFetchPolicy,
  ) {}

  private async getJson(endpoint: string): Promise<unknown> {
    const res = await safeRequest(endpoint, { method: "GET", timeoutMs: 10_000, maxBytes: 8 * 1024 * 1024, headers: { "user-agent": this.userAgent, accept: "application/json" } }, this.policy);
    if (res.status === 429) throw new EdgarError("EDGAR rate limit reached (HTTP 429)");
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new EdgarError(`EDGAR answered HTTP ${res.status}`);
    try {
      return JSON.parse(res.body);
    } catch {
      throw new EdgarError("EDGAR answered with a body that is not JSON");
    }
  }

  /** The CIK of a ticker, from EDGAR's ticker map. */
  async cikOf(ticker: string, now = Date.now()): Promise<{ cik: number; title: string; endpoint: string } | undefined> {
    const endpoint = `${this.urls.www.replace(/\/+$/, "")}/files/company_tickers.json`;
    if (!this.tickers || now - this.tickers.at > TICKERS_TTL_MS) {
      const parsed = TickerMap.safeParse(await this.getJson(endpoint));
      if (!parsed.success) throw new EdgarError("EDGAR's ticker map is malformed");
      this.tickers = { at: now, map: new Map(Object.values(parsed.data).map((t) => [t.ticker.toUpperCase(), { cik: t.cik_str, title: t.title }])) };
    }
    const hit = this.tickers.map.get(ticker.toUpperCase());
    return hit && { ...hit, endpoint };
  }

  /** A company's submissions, or undefined when EDGAR has no such CIK. */
  async submissionsOf(cik: number, now = Date.now()): Promise<{ at: number; body: CompanySubmissions; endpoint: string } | undefined> {
    const cached = this.submissions.get(cik);
    if (cached && now - cached.at <= SUBMISSIONS_TTL_MS) return cached;
    const endpoint = `${this.urls.data.replace(/\/+$/, "")}/submissions/CIK${String(cik).padStart(10, "0")}.json`;
    const raw = await this.getJson(endpoint);
    if (raw === undefined) return undefined;
    const parsed = Submissions.safeParse(raw);
    if (!parsed.success) throw new EdgarError("EDGAR's submissions file is malformed");
    const entry = { at: now, body: parsed.data, endpoint };
    if (this.submissions.size >= 1_000) this.submissions.delete(this.submissions.keys().next().value!); // bounded: oldest out
    this.submissions.set(cik, entry);
    return entry;
  }

  /** The public URL of a filing's primary document. */
  documentUrl(cik: number, accession: string, document: string): string {
    return `${this.urls.www.replace(/\/+$/, "")}/Archives/edgar/data/${cik}/${accession.replace(/-/g, "")}/${document}`;
  }
}

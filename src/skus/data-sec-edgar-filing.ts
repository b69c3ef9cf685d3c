import { z } from "zod";
import type { EdgarClient } from "../filings/edgar-client.js";
import type { SkuHandler } from "./sku-handler.js";
import { Iso } from "./output-shapes.js";

// data.sec-edgar-filing: recent 10-K, 10-Q and 8-K filings of a company named by ticker or CIK, from
// SEC EDGAR's submissions API, each with a link to its primary document. A ticker or CIK EDGAR does not
// know is `insufficient_subject` (not charged); EDGAR failing fails the call (not charged).

export const FORMS = ["10-K", "10-Q", "8-K"] as const;

const Input = z
  .object({
    ticker: z.string().trim().toUpperCase().regex(/^[A-Z0-9.-]{1,10}$/, "a ticker like AAPL").optional(),
    cik: z.union([z.string().regex(/^\d{1,10}$/), z.number().int().positive()]).optional(),
    forms: z.array(z.enum(FORMS)).min(1).optional(),
    limit: z.number().int().min(1).max(40).default(10),
  })
  .loose()
  .refine((v) => v.ticker !== undefined || v.cik !== undefined, { message: "ticker or cik is required", path: ["ticker"] });
type Input = z.infer<typeof Input>;

const Output = z.object({
  company: z.string(),
  cik: z.string().regex(/^\d{10}$/),
  tickers: z.array(z.string()),
  forms: z.array(z.enum(FORMS)),
  filings: z.array(
    z.object({
      form: z.enum(FORMS),
      filing_date: z.string().nullable(),
      report_date: z.string().nullable(),
      accession_number: z.string(),
      description: z.string().nullable(),
      url: z.string().describe("the filing's primary document on www.sec.gov"),
    }),
  ),
  source: z.object({ name: z.literal("SEC EDGAR"), submissions_endpoint: z.string(), ticker_endpoint: z.string().nullable(), fetched_at: Iso, answered_at: Iso }),
});


async function resolve(edgar: EdgarClient, input: Input) {
  if (input.cik !== undefined) return { cik: Number(input.cik), tickerEndpoint: null };
  const hit = await edgar.cikOf(input.ticker!);
  return hit ? { cik: hit.cik, tickerEndpoint: hit.endpoint } : undefined;
}

export function dataSecEdgarFiling(edgar: EdgarClient): SkuHandler<Input> {
  return {
    skuId: "data.sec-edgar-filing",
    poweredBy: "svc-filings/sec-edgar",
    input: Input,
    output: Output,
    upstreams: () => [edgar.urls.www, edgar.urls.data],
    async precheck(input) {
      const who = await resolve(edgar, input);
      if (!who) return `EDGAR knows no ticker ${input.ticker}`;
      return (await edgar.submissionsOf(who.cik)) ? undefined : `EDGAR has no company with CIK ${who.cik}`;
    },
    async run(input, ctx) {
      const who = (await resolve(edgar, input))!;
      const subs = await edgar.submissionsOf(who.cik);
      if (!subs) throw new Error(`EDGAR has no company with CIK ${who.cik}`);
      const r = subs.body.filings.recent;
      const wanted = new Set<string>(input.forms ?? FORMS);
      const filings = r.form
        .map((form, i) => ({ form, i }))
        .filter(({ form }) => wanted.has(form))
        .slice(0, input.limit)
        .map(({ form, i }) => ({
          form,
          filing_date: r.filingDate[i] ?? null,
          report_date: r.reportDate[i] || null,
          accession_number: r.accessionNumber[i]!,
          description: r.primaryDocDescription[i] || null,
          url: edgar.documentUrl(who.cik, r.accessionNumber[i]!, r.primaryDocument[i]!),
        }));
      return {
        company: subs.body.name,
        cik: String(who.cik).padStart(10, "0"),
        tickers: subs.body.tickers,
        forms: [...wanted],
        filings,
        source: { name: "SEC EDGAR", submissions_endpoint: subs.endpoint, ticker_endpoint: who.tickerEndpoint, fetched_at: new Date(subs.at).toISOString(), answered_at: ctx.now.toISOString() },
      };
    },
  };
}

import { expect } from "chai";
import type http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";

const SKU = "data.sec-edgar-filing";
const UA = "Example Operator ops@example.com";

// EDGAR on loopback, in EDGAR's formats: it refuses a request without a declared User-Agent (as SEC does).
const seen: string[] = [];
const edgar: http.RequestListener = (req, res) => {
  seen.push(req.url!);
  const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(typeof body === "string" ? body : JSON.stringify(body));
  if (req.headers["user-agent"] !== UA) return send(403, "<html>Your request has been identified as part of a network of automated tools</html>");
  if (req.url === "/www/files/company_tickers.json") {
    return send(200, { "0": { cik_str: 320193, ticker: "AAPL", title: "Apple Inc." }, "1": { cik_str: 999, ticker: "BROKE", title: "Broken Corp" }, "2": { cik_str: 777, ticker: "BUSY", title: "Busy Inc" } });
  }
  if (req.url === "/data/submissions/CIK0000320193.json") {
    return send(200, {
      cik: "320193",
      name: "Apple Inc.",
      tickers: ["AAPL"],
      filings: {
        recent: {
          accessionNumber: ["0000320193-25-000079", "0001140361-25-000001", "0000320193-25-000077", "0000320193-25-000073", "0000320193-25-000070"],
          filingDate: ["2025-10-31", "2025-10-30", "2025-10-30", "2025-08-01", "2025-07-31"],
          reportDate: ["2025-09-27", "", "2025-10-30", "2025-06-28", ""],
          form: ["10-K", "4", "8-K", "10-Q", "S-8"],
          primaryDocument: ["aapl-20250927.htm", "xslF345X05/form4.xml", "aapl-20251030.htm", "aapl-20250628.htm", "s8.htm"],
          primaryDocDescription: ["10-K", "FORM 4", "8-K", "10-Q", "S-8"],
        },
      },
    });
  }
  if (req.url === "/data/submissions/CIK0000000999.json") return send(200, { cik: "999", name: "Broken Corp", filings: {} });
  if (req.url === "/data/submissions/CIK0000000777.json") return send(429, "<html>Request Rate Threshold Exceeded</html>");
  send(404, "<html>Not Found</html>");
};

describe("data.sec-edgar-filing: recent 10-K/10-Q/8-K from EDGAR by ticker or CIK", function () {
  this.timeout(60_000);
  const up = upstreamForSuite(edgar, (base) => ({ SEC_WWW_URL: `${base}/www`, SEC_DATA_URL: `${base}/data`, SEC_EDGAR_USER_AGENT: UA }));

  const pay = (body: unknown) => up.payJson(SKU, body);
  const unpaid = (body: unknown) => up.unpaid(SKU, body);

  it("lists the periodic and current reports by ticker, with links to the primary documents and the source", async () => {
    const before = await up.balance();
    const { status, body } = await pay({ ticker: "aapl" });
    expect(status).to.equal(200);
    const d = body.deliverable;
    expect(d).to.include({ company: "Apple Inc.", cik: "0000320193" });
    expect(d.filings.map((f: Json) => f.form)).to.deep.equal(["10-K", "8-K", "10-Q"]); // the Form 4 and S-8 are not asked for
    expect(d.filings[0]).to.deep.equal({
      form: "10-K",
      filing_date: "2025-10-31",
      report_date: "2025-09-27",
      accession_number: "0000320193-25-000079",
      description: "10-K",
      url: `${up.base}/www/Archives/edgar/data/320193/000032019325000079/aapl-20250927.htm`,
    });
    expect(d.source.submissions_endpoint).to.equal(`${up.base}/data/submissions/CIK0000320193.json`);
    expect(d.source.ticker_endpoint).to.equal(`${up.base}/www/files/company_tickers.json`);
    expect(await up.balance()).to.equal(before - 50_000n);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("takes a CIK and a form filter and a limit", async () => {
    const { body } = await pay({ cik: "320193", forms: ["8-K", "10-Q"], limit: 1 });
    expect(body.deliverable.filings.map((f: Json) => f.form)).to.deep.equal(["8-K"]);
    expect(body.deliverable.source.ticker_endpoint).to.equal(null);
  });

  it("an unknown ticker or CIK is insufficient_subject before any challenge; EDGAR failing or malformed is never charged", async () => {
    for (const body of [{ ticker: "NOPE" }, { cik: 123 }]) {
      const r = await unpaid(body);
      expect(r.body).to.include({ status: "insufficient_subject", charged: false });
      expect(r.challenged).to.equal(false);
    }
    await expectFailuresUncharged(up, SKU, [
      [{ ticker: "BROKE" }, 503, "upstream_unavailable"],
      [{ ticker: "BUSY" }, 503, "upstream_unavailable"],
    ]);
  });

  it("refuses bad input before any challenge", async () => {
    for (const body of [{}, { ticker: "A B" }, { cik: "12ab" }, { ticker: "AAPL", forms: ["S-1"] }, { ticker: "AAPL", limit: 500 }]) {
      const r = await unpaid(body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.challenged).to.equal(false);
    }
  });
});

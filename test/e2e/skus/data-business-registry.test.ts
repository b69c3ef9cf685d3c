import { expect } from "chai";
import { createHash } from "node:crypto";
import http from "node:http";
import { expectLedgerConsistent } from "../../fixtures/ledger-checks.js";
import { expectFailuresUncharged, type Json } from "../../fixtures/sku-calls.js";
import { upstreamForSuite } from "../../fixtures/upstream.js";
import { BusinessRegistryOutput } from "../../../src/skus/data-business-registry.js";
import { JSON_LD_PAGE, NO_RECORD_PAGE, TABLES_PAGE, TEXT_PAGE, TRAPPED_PAGE } from "../../fixtures/web/registry-pages.js";

const SKU = "data.business-registry";

const registry: http.RequestListener = (req, res) => {
  const page = (body: string) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  if (req.url === "/company/09876543") return page(JSON_LD_PAGE);
  if (req.url === "/entity?file=7012345") return page(TABLES_PAGE);
  if (req.url === "/profile/SC401234") return page(TEXT_PAGE);
  if (req.url === "/old/SC401234") return res.writeHead(301, { location: "/profile/SC401234" }).end();
  if (req.url === "/about") return page(NO_RECORD_PAGE);
  if (req.url === "/company/01234567") return page(TRAPPED_PAGE);
  if (req.url === "/api/company/HRB12345.jsonld") return res.writeHead(200, { "content-type": "application/ld+json" }).end(JSON.stringify({ "@context": "https://schema.org", "@type": "Organization", legalName: "Solo GmbH", identifier: { "@type": "PropertyValue", propertyID: "Handelsregisternummer", value: "HRB 12345" }, foundingDate: "2012-05-01" }));
  if (req.url === "/rate-limited") return res.writeHead(429, { "retry-after": "60" }).end("Too Many Requests");
  if (req.url === "/image.png") return res.writeHead(200, { "content-type": "image/png" }).end("\x89PNG");
  res.writeHead(404).end("not found");
};

describe("data.business-registry: a company record from a registry page, each field with its provenance", function () {
  this.timeout(60_000);
  const up = upstreamForSuite(registry);

  const pay = (body: unknown) => up.payJson(SKU, body);

  it("reads a JSON-LD record (charged the list price), with provenance per field and the hash rule", async () => {
    const before = await up.balance();
    const res = await pay({ url: `${up.base}/company/09876543` });
    expect(res.status).to.equal(200);
    const d = res.body.deliverable;
    expect(() => BusinessRegistryOutput.parse(d)).not.to.throw();
    expect(d.company_name).to.deep.include({ value: "ACME ROBOTICS LIMITED" });
    expect(d.registration_number).to.deep.include({ value: "09876543", provenance: { method: "json-ld", where: "ld+json[0] identifier[1] (Company number)" } });
    expect(d.status.value).to.equal("Active");
    expect(d.incorporation_date).to.deep.include({ value: "2015-11-03", iso: "2015-11-03" });
    expect(d.addresses[0]).to.deep.include({ kind: "registered", postal_code: "BS1 6AA" });
    expect(d.officers.map((o: Json) => o.name)).to.deep.equal(["Ada Byron", "Charles Babbage", "Mary Somerville"]);
    expect(d.fields_found).to.include.members(["company_name", "registration_number", "status", "incorporation_date", "addresses", "officers"]);
    expect(d.source).to.include({ url: `${up.base}/company/09876543`, status_code: 200, redirects: 0 });
    expect(d.content_scan.matched_rules).to.deep.equal([]);
    expect(d.content_markdown).to.contain("| Registration number | 09876543 | json-ld: ld+json[0] identifier[1] (Company number) |");
    expect(res.body.svc_trust.content_sha256).to.equal(createHash("sha256").update(d.content_markdown, "utf8").digest("hex"));
    expect(res.body.powered_by).to.equal("svc-registry-records/json-ld+tables+text");
    expect(await up.balance()).to.equal(before - 100_000n);
    await expectLedgerConsistent(up.srv.ds);
  });

  it("reads a page of tables only, and a page of text only (behind a redirect, URL given in the task)", async () => {
    const tables = (await pay({ urls: [`${up.base}/entity?file=7012345`] })).body.deliverable;
    expect(tables.registration_number).to.deep.include({ value: "7012345", provenance: { method: "table", where: 'table[0] row "File Number:"' } });
    expect(tables.status.value).to.equal("Active - Good Standing");
    expect(tables.jurisdiction.value).to.equal("Delaware");
    expect(tables.officers.map((o: Json) => [o.name, o.role])).to.deep.equal([
      ["Jane Q. Public", "Managing Member"],
      ["John Roe", "Registered Agent"],
    ]);
    expect(tables.methods_used).to.deep.equal(["table"]);

    const text = (await pay({ task: `Pull the registry record at ${up.base}/old/SC401234 please.` })).body.deliverable;
    expect(text.final_url).to.equal(`${up.base}/profile/SC401234`);
    expect(text.registration_number.value).to.equal("SC401234");
    expect(text.registration_number.provenance.method).to.equal("text");
    expect(text.incorporation_date.iso).to.equal("2011-07-04");
    expect(text.addresses[0].text).to.equal("22 Castle Street, Edinburgh, EH2 3AH");
    expect(text.officers.map((o: Json) => o.name)).to.deep.equal(["Isla Campbell", "Fraser McLeod"]);
    expect(text.methods_used).to.deep.equal(["text", "heading"]);
  });

  it("reads a bare JSON-LD document", async () => {
    const d = (await pay({ url: `${up.base}/api/company/HRB12345.jsonld` })).body.deliverable;
    expect(d.company_name.value).to.equal("Solo GmbH");
    expect(d.registration_number.value).to.equal("HRB 12345");
    expect(d.incorporation_date.iso).to.equal("2012-05-01");
  });

  it("refuses (409, not charged) a page with no registry fields and a page that trips the content-trap scan", async () => {
    const [, trap] = await expectFailuresUncharged(up, SKU, [
      [{ url: `${up.base}/about` }, 409, "no_registry_record"],
      [{ url: `${up.base}/company/01234567` }, 409, "content_trap"],
    ]);
    expect(trap.body.error.message).to.contain("markup.hidden_comment_instruction");
  });

  it("charges nothing when the page cannot be read: 404, 429, not a page", async () => {
    await expectFailuresUncharged(up, SKU, [
      [{ url: `${up.base}/company/00000000` }, 503, "service_failed"],
      [{ url: `${up.base}/rate-limited` }, 503, "service_failed"],
      [{ url: `${up.base}/image.png` }, 503, "service_failed"],
    ]);
  });

  it("refuses bad input before any challenge and charges nothing", async () => {
    const before = await up.balance();
    for (const body of [{}, { task: "no url here" }, { url: "http://169.254.169.254/latest/meta-data" }, { url: "ftp://registry.example/x" }, { urls: ["https://a.example/", "https://b.example/"] }]) {
      const res = await up.unpaid(SKU, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.challenged).to.equal(false);
      expect(JSON.stringify(res.body)).to.match(/url/);
    }
    expect(await up.balance()).to.equal(before);
  });
});

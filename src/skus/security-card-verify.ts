import { createHash } from "node:crypto";
import { z } from "zod";
import { runChecks } from "../agent-cards/card-checks.js";
import { declaredRegistrations, sameRegistry } from "../agent-cards/card-facts.js";
import { detectKind, schemaIssues, type Json } from "../agent-cards/card-schemas.js";
import { followRedirects } from "../platform/http/follow-redirects.js";
import { checkTarget, type SafeFetchPolicy } from "../platform/http/safe-fetch.js";
import { scanContent } from "../trust/content-scan.js";
import type { IdentityChain } from "../trust-evidence/identity-chain.js";
import { identityStatus, IdentityStatusSchema, publicStatus } from "../trust-evidence/identity-status.js";
import { scoreOf } from "./engine-score.js";
import { AgentSubject, lookupAgent, subjectText, type AgentLookup } from "./registered-agent.js";
import type { ReputationOf } from "./reputation-lookup.js";
import { SkuRefusal, type SkuHandler } from "./sku-handler.js";
import type { AgentDirectory } from "./subject.js";

// security.card-verify: fetches an agent's A2A agent card or ERC-8004 registration file from the URL the
// buyer gives (safe fetcher, redirects re-checked) and checks it: schema validity, that the agent it
// names, its endpoints, wallet and claimed badge match our registry entry, and (through the ERC-8004
// Identity Registry on-chain) that the identity it declares is the one linked here, still held by the
// wallet that linked it, with an agentURI pointing at this file. Each check is pass/fail/skipped with
// evidence. A fetch failure fails the call (nothing charged); a document that is not JSON, or trips the
// content-trap scan, is refused (409, nothing charged).

const MAX_BYTES = 512 * 1024;
const TIMEOUT_MS = 8_000;

const Input = z
  .object({
    url: z.string().trim().min(1).max(2048),
    subject: AgentSubject.optional(),
    kind: z.enum(["auto", "a2a_card", "erc8004_registration"]).default("auto"),
  })
  .loose();
type Input = z.infer<typeof Input>;

const Check = z.object({ check: z.string(), outcome: z.enum(["pass", "fail", "skipped"]), evidence: z.string() });

export const CardVerifyOutput = z.object({
  url: z.string(),
  final_url: z.string(),
  document_kind: z.enum(["a2a_card", "erc8004_registration", "unknown"]),
  spec: z.string(),
  verdict: z.enum(["verified", "mismatch"]),
  summary: z.object({ pass: z.number(), fail: z.number(), skipped: z.number() }),
  checks: z.array(Check),
  registry_entry: z
    .object({ agent_id: z.string(), name: z.string(), payout_wallet: z.string().nullable(), badge: z.string(), score: z.number(), passport_url: z.string(), onchain_identity: IdentityStatusSchema })
    .nullable(),
  document: z.object({ name: z.string().nullable(), sha256: z.string(), bytes: z.number() }),
  source: z.object({ url: z.string(), status_code: z.number(), content_type: z.string().nullable(), redirects: z.number(), fetched_at: z.string() }),
  chain_source: z.object({ name: z.string(), endpoint: z.string(), read_at: z.string() }),
  verified_at: z.string(),
});

export function securityCardVerify(directory: AgentDirectory, reputationOf: ReputationOf | undefined, policy: SafeFetchPolicy, chain: IdentityChain, registryBase: string | undefined): SkuHandler<Input> {
  const input = Input.superRefine((v, ctx) => {
    try {
      checkTarget(v.url, policy);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `${v.url}: ${(err as Error).message}` });
    }
  });
  return {
    skuId: "security.card-verify",
    poweredBy: "svc-registry/card-verify",
    input,
    output: CardVerifyOutput,
    upstreams: (v) => [new URL(v.url).origin],
    async precheck(v, manager) {
      if (v.subject === undefined) return undefined;
      const found = await lookupAgent(directory, manager, subjectText(v.subject));
      return found.agent ? undefined : found.reason;
    },
    async run(v, ctx) {
      const { hops, response } = await followRedirects(v.url, "GET", policy, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, userAgent: "svc-card-verify/1.0" });
      if (response.status < 200 || response.status >= 300) throw new Error(`${v.url} answered ${response.status}`);
      const finalUrl = hops.at(-1)!.url;
      let doc: Json;
      try {
        const parsed = JSON.parse(response.body) as unknown;
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
        doc = parsed as Json;
      } catch {
        throw new SkuRefusal("not_a_card", `${finalUrl} did not answer with a JSON object (an agent card or registration file)${Buffer.byteLength(response.body) >= MAX_BYTES ? ` within ${MAX_BYTES} bytes` : ""}`);
      }
      const trapped = scanContent(doc);
      if (trapped.length) throw new SkuRefusal("content_trap", `the document at ${finalUrl} matches content-trap rule(s) ${trapped.join(", ")}`);

      const kind = detectKind(doc, v.kind);
      const { lookup, by } = await findEntry(v, doc, kind === "erc8004_registration", ctx.manager);
      const agent = lookup.agent;
      const identity = agent ? await identityStatus(agent, chain, ctx.now) : undefined;
      const score = agent ? await scoreOf(agent, reputationOf) : undefined;
      const checks = await runChecks({
        doc,
        kind,
        requestedUrl: v.url,
        finalUrl,
        agent,
        lookedUpBy: by,
        notFound: lookup.agent ? undefined : lookup.reason,
        identity,
        chain,
        registryBase,
        badge: score?.badge,
      });
      const count = (o: string) => checks.filter((c) => c.outcome === o).length;
      return {
        url: v.url,
        final_url: finalUrl,
        document_kind: kind,
        spec: schemaIssues(doc, kind).spec,
        verdict: count("fail") === 0 ? "verified" : "mismatch",
        summary: { pass: count("pass"), fail: count("fail"), skipped: count("skipped") },
        checks,
        registry_entry:
          agent && identity && score
            ? { agent_id: agent.agentId, name: agent.name, payout_wallet: agent.evmAddress, badge: score.badge, score: score.score, passport_url: `/a2a/passport/${agent.agentId}`, onchain_identity: publicStatus(identity) }
            : null,
        document: { name: typeof doc.name === "string" ? doc.name : null, sha256: createHash("sha256").update(response.body, "utf8").digest("hex"), bytes: Buffer.byteLength(response.body) },
        source: { url: finalUrl, status_code: response.status, content_type: response.headers["content-type"] ? String(response.headers["content-type"]) : null, redirects: hops.length - 1, fetched_at: ctx.now.toISOString() },
        chain_source: { name: "ERC-8004 Identity Registry", endpoint: chain.agentRegistry, read_at: ctx.now.toISOString() },
        verified_at: ctx.now.toISOString(),
      };
    },
  };

  /** The registry entry to compare with: the buyer's subject, else the identity the file registers here, else the name it gives. */
  async function findEntry(v: Input, doc: Json, registration: boolean, manager: Parameters<typeof lookupAgent>[1]): Promise<{ lookup: AgentLookup; by: string }> {
    if (v.subject !== undefined) return { lookup: await lookupAgent(directory, manager, subjectText(v.subject)), by: `subject ${subjectText(v.subject)}` };
    if (registration) {
      const here = declaredRegistrations(doc).find((r) => sameRegistry(r.agentRegistry, chain.agentRegistry));
      if (here) {
        const lookup = await lookupAgent(directory, manager, `${chain.agentRegistry}:${here.agentId}`);
        if (lookup.agent) return { lookup, by: `the file's registration ${chain.agentRegistry}:${here.agentId}` };
      }
    }
    if (typeof doc.name !== "string" || !doc.name.trim()) return { lookup: { agent: undefined, reason: "the document names no agent" }, by: "the document" };
    return { lookup: await lookupAgent(directory, manager, doc.name.slice(0, 160)), by: `the document's name ${doc.name.slice(0, 160)}` };
  }
}

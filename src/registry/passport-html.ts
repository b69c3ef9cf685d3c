import { createHash } from "node:crypto";
import escapeHtml from "escape-html";
import type { JsonObject } from "@bufbuild/protobuf";

// The public passport page. Every agent-supplied string is HTML-escaped; the page loads nothing and
// runs no script (its Content-Security-Policy says so).

const STYLE = "body{font:15px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem}th{text-align:left;padding-right:1rem}";
// The one inline stylesheet is allowed by its hash, not by 'unsafe-inline'.
const STYLE_HASH = `sha256-${createHash("sha256").update(STYLE).digest("base64")}`;

export const PASSPORT_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": `default-src 'none'; style-src '${STYLE_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export function renderPassport(p: JsonObject): string {
  const agent = (p.agent ?? {}) as JsonObject;
  const e = (v: unknown) => escapeHtml(String(v ?? ""));
  const caps = ((agent.capabilities ?? []) as string[]).map((c) => `<li>${e(c)}</li>`).join("") || "<li>none declared</li>";
  const row = (label: string, value: unknown) => `<tr><th>${label}</th><td>${e(value)}</td></tr>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Passport: ${e(agent.name)}</title>
<style>${STYLE}</style></head>
<body><h1>${e(agent.name)}</h1>
<table>
${row("Agent id", agent.agent_id)}
${row("Tier", agent.tier)}
${row("Registered", agent.create_time)}
${row("Payout wallet", agent.evm_address || "not set")}
${row("On-chain identity (ERC-8004)", agent.onchain_identity || "not linked")}
${row("Reputation", p.reputation_score)}
${row("Badge", p.badge)}
${row("Completed jobs", p.completed_jobs)}
${row("Failed jobs", p.failed_jobs)}
${row("Disputes", p.disputes)}
${row("Attestations", p.attestations)}
</table>
<h2>Capabilities</h2><ul>${caps}</ul>
</body></html>`;
}

import { canonicalJson } from "../platform/canonical-json.js";
import type { AgentEntity } from "../registry/agent.entity.js";
import type { IdentityChain, IdentityRecord } from "../trust-evidence/identity-chain.js";
import type { IdentityStatus } from "../trust-evidence/identity-status.js";
import { declaredBadge, declaredEndpoints, declaredRegistrations, declaredWallet, primaryEndpoint, sameRegistry } from "./card-facts.js";
import { schemaIssues, type DocumentKind, type Json } from "./card-schemas.js";

// The checks of security.card-verify, each `pass`, `fail` or `skipped` (nothing to compare) with its
// evidence. A check that needs the registry entry is skipped when no entry was found (that is its own
// failing check); on-chain checks read the ERC-8004 Identity Registry this service links identities from.

export type Outcome = "pass" | "fail" | "skipped";
export type Finding = { check: string; outcome: Outcome; evidence: string };

export interface CheckInput {
  doc: Json;
  kind: DocumentKind;
  requestedUrl: string;
  finalUrl: string;
  agent: AgentEntity | undefined;
  /** How the entry was looked for ("subject acme", "the card's name acme"), and why it failed if it did. */
  lookedUpBy: string;
  notFound: string | undefined;
  identity: IdentityStatus | undefined;
  chain: IdentityChain;
  /** This service's public base URL, when configured: endpoints on it must be this agent's pages. */
  registryBase: string | undefined;
  badge: string | undefined;
}

// The registry's own pages about an agent: /a2a/passport/<id> and /a2a/agents/<id or name>/registration.json.
const REGISTRY_PAGE = /^\/a2a\/(?:passport\/([^/]+)|agents\/([^/]+)\/registration\.json)$/i;

export async function runChecks(i: CheckInput): Promise<Finding[]> {
  const findings: Finding[] = [];
  const add = (check: string, outcome: Outcome, evidence: string) => findings.push({ check, outcome, evidence });
  const agent = i.agent;
  const noEntry = "no registry entry to compare with";

  const schema = schemaIssues(i.doc, i.kind);
  add("schema", schema.issues.length ? "fail" : "pass", schema.issues.length ? `${schema.spec}: ${schema.issues.join("; ")}` : `valid ${schema.spec}`);

  add("registry_entry", agent ? "pass" : "fail", agent ? `${i.lookedUpBy} is registered as ${agent.agentId} (${agent.name})` : `${i.lookedUpBy}: ${i.notFound}`);

  const name = typeof i.doc.name === "string" ? i.doc.name : undefined;
  if (!agent) add("name", "skipped", noEntry);
  else if (name === undefined) add("name", "fail", "the document names no agent");
  else {
    const ok = [agent.name.toLowerCase(), agent.agentId].includes(name.trim().toLowerCase());
    add("name", ok ? "pass" : "fail", ok ? `names ${name}, the registered name` : `names ${name}; the registry entry is ${agent.name}`);
  }

  add(...endpointCheck(i));

  if (i.kind === "a2a_card") {
    const primary = primaryEndpoint(i.doc);
    const served = new URL(i.finalUrl);
    if (!primary) add("served_from", "fail", "the card declares no endpoint URL");
    else {
      const ok = primary.hostname.toLowerCase() === served.hostname.toLowerCase();
      add("served_from", ok ? "pass" : "fail", ok ? `the card's endpoint ${primary.origin} is on the host that serves the card` : `the card is served by ${served.host} but declares its endpoint on ${primary.host}`);
    }
  } else {
    add("served_from", "skipped", "a registration file may be served from anywhere; its binding is the on-chain agentURI");
  }

  const wallet = declaredWallet(i.doc, i.kind);
  if (!agent) add("wallet", "skipped", noEntry);
  else if (!wallet) add("wallet", "skipped", `the document declares no wallet${agent.evmAddress ? `; the registry's payout wallet is ${agent.evmAddress}` : ""}`);
  else if (!agent.evmAddress) add("wallet", "fail", `declares ${wallet.address} at ${wallet.where}; the registry entry has no payout wallet`);
  else {
    const ok = wallet.address.toLowerCase() === agent.evmAddress.toLowerCase();
    add("wallet", ok ? "pass" : "fail", ok ? `${wallet.where} is the registered payout wallet ${agent.evmAddress}` : `${wallet.where} declares ${wallet.address}; the registered payout wallet is ${agent.evmAddress}`);
  }

  const badge = declaredBadge(i.doc);
  if (!agent) add("badge", "skipped", noEntry);
  else if (!badge) add("badge", "skipped", `the document claims no badge; the registry's badge is ${i.badge}`);
  else {
    const ok = badge.badge.trim().toLowerCase() === i.badge;
    add("badge", ok ? "pass" : "fail", ok ? `claims ${badge.badge}, the badge the registry computes` : `claims ${badge.badge} at ${badge.where}; the registry computes ${i.badge}`);
  }

  for (const f of await onchainChecks(i)) findings.push(f);
  return findings;
}

function endpointCheck(i: CheckInput): [string, Outcome, string] {
  const endpoints = declaredEndpoints(i.doc, i.kind);
  if (!i.agent) return ["endpoints", "skipped", "no registry entry to compare with"];
  const agent = i.agent;
  const base = i.registryBase ? new URL(i.registryBase) : undefined;
  const mine = new Set([agent.agentId.toLowerCase(), agent.name.toLowerCase()]);
  const registryPages = endpoints.flatMap((e) => {
    const m = REGISTRY_PAGE.exec(e.url.pathname);
    if (!m || (base && e.url.host !== base.host)) return [];
    return [{ ...e, names: decodeURIComponent(m[1] ?? m[2]!).toLowerCase() }];
  });
  const foreign = registryPages.find((p) => !mine.has(p.names));
  if (foreign) return ["endpoints", "fail", `${foreign.where} (${foreign.url}) is the registry page of another agent (${foreign.names})`];
  const callbackHost = agent.callbackUrl ? new URL(agent.callbackUrl).host.toLowerCase() : undefined;
  const onCallbackHost = callbackHost ? endpoints.filter((e) => e.url.host.toLowerCase() === callbackHost) : [];
  const matched = [...registryPages.map((p) => `${p.where} is this agent's registry page`), ...onCallbackHost.map((e) => `${e.where} is on ${callbackHost}, the agent's registered callback host`)];
  if (matched.length) return ["endpoints", "pass", matched.join("; ")];
  if (!callbackHost) return ["endpoints", "skipped", "the registry records no endpoint for this agent (no callback URL) and the document links none of its registry pages"];
  return ["endpoints", "fail", `none of the ${endpoints.length} declared endpoint(s) (${endpoints.map((e) => e.url.host).join(", ") || "none"}) is on ${callbackHost}, the agent's registered callback host, or links its registry pages`];
}

async function onchainChecks(i: CheckInput): Promise<Finding[]> {
  const out: Finding[] = [];
  const add = (check: string, outcome: Outcome, evidence: string) => out.push({ check, outcome, evidence });
  const ours = i.chain.agentRegistry;
  const linkedId = i.identity?.linked && i.identity.state !== "other_registry" ? BigInt(i.identity.linked.agent_id) : undefined;
  let token: bigint | undefined;

  if (i.kind === "erc8004_registration") {
    const regs = declaredRegistrations(i.doc);
    const here = regs.filter((r) => sameRegistry(r.agentRegistry, ours));
    if (!here.length) {
      add("onchain_registration", regs.length ? "skipped" : "fail", regs.length ? `no registration on ${ours} (declared: ${regs.map((r) => r.agentRegistry).join(", ")})` : "the file declares no registrations");
    } else if (!i.agent) {
      token = here[0]!.agentId;
      add("onchain_registration", "skipped", `declares token ${token} on ${ours}; no registry entry to compare with`);
    } else if (linkedId === undefined) {
      token = here[0]!.agentId;
      add("onchain_registration", "fail", `declares token ${token} on ${ours}, but ${i.agent.name} has linked no ERC-8004 identity here`);
    } else {
      const match = here.find((r) => r.agentId === linkedId);
      token = match?.agentId ?? here[0]!.agentId;
      add("onchain_registration", match ? "pass" : "fail", match ? `${match.where} is token ${linkedId}, the identity ${i.agent.name} linked` : `declares token(s) ${here.map((r) => r.agentId).join(", ")}; ${i.agent.name} linked token ${linkedId}`);
    }
  } else if (i.kind === "a2a_card") {
    if (!i.agent) add("onchain_registration", "skipped", "no registry entry to compare with");
    else if (linkedId === undefined) add("onchain_registration", "skipped", `${i.agent.name} has linked no ERC-8004 identity on ${ours}`);
    else {
      token = linkedId;
      add("onchain_registration", "pass", `${i.agent.name} linked token ${linkedId} on ${ours}`);
    }
  } else {
    add("onchain_registration", "skipped", "not an agent card or registration file");
  }

  if (token === undefined) {
    add("onchain_owner", "skipped", "no token on this registry to read");
    add("onchain_agent_uri", "skipped", "no token on this registry to read");
    return out;
  }
  const record: IdentityRecord | undefined = token === linkedId && i.identity?.record ? i.identity.record : await i.chain.read(token);
  if (!record) {
    add("onchain_owner", "fail", `token ${token} does not exist on ${ours}`);
    add("onchain_agent_uri", i.kind === "erc8004_registration" ? "fail" : "skipped", `token ${token} does not exist on ${ours}`);
    return out;
  }
  const wallet = declaredWallet(i.doc, i.kind);
  if (i.agent && token === linkedId) {
    const linkedOwner = i.identity?.linked?.owner_at_link ?? null;
    const ok = linkedOwner !== null && linkedOwner.toLowerCase() === record.owner.toLowerCase();
    add("onchain_owner", ok ? "pass" : "fail", ok ? `token ${token} is owned by ${record.owner}, who signed the link to ${i.agent.name}` : `token ${token} is owned by ${record.owner}; the link to ${i.agent.name} was signed by ${linkedOwner}`);
  } else if (wallet) {
    const ok = [record.owner, record.agentWallet].some((a) => a.toLowerCase() === wallet.address.toLowerCase());
    add("onchain_owner", ok ? "pass" : "fail", ok ? `token ${token}'s owner or agent wallet is the declared ${wallet.address}` : `token ${token} is owned by ${record.owner} (agent wallet ${record.agentWallet}), not the declared ${wallet.address}`);
  } else {
    add("onchain_owner", "skipped", `token ${token} is owned by ${record.owner}; nothing in the registry or the document to compare it with`);
  }

  if (i.kind !== "erc8004_registration") {
    add("onchain_agent_uri", "skipped", `an A2A card is not the agentURI document (token ${token}'s agentURI is ${record.agentUri})`);
  } else {
    const ok = [i.requestedUrl, i.finalUrl].includes(record.agentUri) || sameDataUri(record.agentUri, i.doc);
    add("onchain_agent_uri", ok ? "pass" : "fail", ok ? `token ${token}'s agentURI points at this file` : `token ${token}'s agentURI is ${record.agentUri}, not ${i.requestedUrl}`);
  }
  return out;
}

/** A fully on-chain agentURI (`data:application/json;base64,…`) holding this very document. */
function sameDataUri(uri: string, doc: Json): boolean {
  const m = /^data:application\/json(?:;charset=[^;,]+)?(;base64)?,(.*)$/is.exec(uri);
  if (!m) return false;
  try {
    const text = m[1] ? Buffer.from(m[2]!, "base64").toString("utf8") : decodeURIComponent(m[2]!);
    return canonicalJson(JSON.parse(text)) === canonicalJson(doc);
  } catch {
    return false;
  }
}

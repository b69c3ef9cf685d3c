import { getAddress, isAddress } from "viem";
import type { DocumentKind, Json } from "./card-schemas.js";

// The facts a card or registration file declares that can be compared with our registry and the chain:
// its endpoints, its wallet, a badge it claims, and (ERC-8004) its on-chain registrations. Read
// defensively: a malformed document yields fewer facts, and the schema check reports why.

export interface Endpoint {
  where: string;
  url: URL;
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function httpUrl(v: unknown): URL | undefined {
  if (typeof v !== "string") return undefined;
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
  } catch {
    return undefined;
  }
}

export function declaredEndpoints(doc: Json, kind: DocumentKind): Endpoint[] {
  const out: Endpoint[] = [];
  const add = (where: string, v: unknown) => {
    const url = httpUrl(v);
    if (url) out.push({ where, url });
  };
  if (kind === "a2a_card") {
    add("url", doc.url);
    list(doc.additionalInterfaces).forEach((i, n) => isObj(i) && add(`additionalInterfaces.${n}.url`, i.url));
    list(doc.supportedInterfaces).forEach((i, n) => isObj(i) && add(`supportedInterfaces.${n}.url`, i.url));
  } else if (kind === "erc8004_registration") {
    for (const key of ["services", "endpoints"]) list(doc[key]).forEach((s, n) => isObj(s) && add(`${key}.${n}.endpoint`, s.endpoint));
  }
  return out;
}

/** The card's main endpoint: where an A2A client would talk to the agent. */
export function primaryEndpoint(doc: Json): URL | undefined {
  const first = list(doc.supportedInterfaces)[0];
  return httpUrl(doc.url) ?? (isObj(first) ? httpUrl(first.url) : undefined);
}

/** A wallet as a plain address or CAIP-10 (`eip155:<chainId>:<address>`). */
export function parseWallet(v: unknown): { address: string; network: string | null } | undefined {
  if (typeof v !== "string") return undefined;
  const caip = /^(eip155:\d{1,12}):(0x[0-9a-fA-F]{40})$/.exec(v.trim());
  if (caip) return { address: getAddress(caip[2]!), network: caip[1]! };
  return isAddress(v.trim(), { strict: false }) ? { address: getAddress(v.trim()), network: null } : undefined;
}

const WALLET_KEYS = ["agentWallet", "wallet", "payTo", "pay_to", "address"];

export function declaredWallet(doc: Json, kind: DocumentKind): { where: string; address: string; network: string | null } | undefined {
  for (const key of WALLET_KEYS.slice(0, 3)) {
    const w = parseWallet(doc[key]);
    if (w) return { where: key, ...w };
  }
  if (kind === "erc8004_registration") {
    for (const key of ["services", "endpoints"]) {
      for (const [n, s] of list(doc[key]).entries()) {
        const w = isObj(s) && typeof s.name === "string" && s.name.toLowerCase() === "agentwallet" ? parseWallet(s.endpoint) : undefined;
        if (w) return { where: `${key}.${n}.endpoint`, ...w };
      }
    }
  }
  if (kind === "a2a_card" && isObj(doc.capabilities)) {
    // Payment extensions (a2a-x402 and the like) carry the pay-to wallet in their params.
    for (const [n, e] of list(doc.capabilities.extensions).entries()) {
      const params = isObj(e) && isObj(e.params) ? e.params : {};
      for (const key of WALLET_KEYS) {
        const w = parseWallet(params[key]);
        if (w) return { where: `capabilities.extensions.${n}.params.${key}`, ...w };
      }
    }
  }
  return undefined;
}

export function declaredBadge(doc: Json): { where: string; badge: string } | undefined {
  if (typeof doc.badge === "string") return { where: "badge", badge: doc.badge };
  if (isObj(doc.badge) && typeof doc.badge.level === "string") return { where: "badge.level", badge: doc.badge.level };
  const exts = isObj(doc.capabilities) ? list(doc.capabilities.extensions) : [];
  for (const [n, e] of exts.entries()) {
    if (isObj(e) && isObj(e.params) && typeof e.params.badge === "string") return { where: `capabilities.extensions.${n}.params.badge`, badge: e.params.badge };
  }
  return undefined;
}

export interface DeclaredRegistration {
  where: string;
  agentId: bigint;
  agentRegistry: string;
}

export function declaredRegistrations(doc: Json): DeclaredRegistration[] {
  return list(doc.registrations).flatMap((r, n) => {
    if (!isObj(r) || typeof r.agentRegistry !== "string") return [];
    const id = typeof r.agentId === "number" && Number.isSafeInteger(r.agentId) && r.agentId >= 0 ? BigInt(r.agentId) : typeof r.agentId === "string" && /^\d{1,78}$/.test(r.agentId) ? BigInt(r.agentId) : undefined;
    return id === undefined ? [] : [{ where: `registrations.${n}`, agentId: id, agentRegistry: r.agentRegistry }];
  });
}

/** Whether an `agentRegistry` names the registry `ours` (`eip155:<chainId>:<address>`, address in any case). */
export function sameRegistry(declared: string, ours: string): boolean {
  return declared.toLowerCase() === ours.toLowerCase();
}

import { GOLD_GATED_INTERNAL_AGENTS } from "../marketplace/badge-gates.js";

// Agent names: 3 to 32 characters, letters, digits, `.`, `_`, `-`, starting and ending with a letter or
// digit; unique case-insensitively. The service's own names are reserved.

export const NAME_RULE = "3 to 32 characters: letters, digits, '.', '_' or '-', starting and ending with a letter or digit";
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{1,30}[A-Za-z0-9]$/;
const RESERVED = new Set(["svc", "admin", "administrator", "operator", "system", "root", "support", "treasury", "facilitator", ...GOLD_GATED_INTERNAL_AGENTS]);

export type NameCheck = { ok: true; key: string } | { ok: false; reason: "invalid_name" | "name_reserved"; message: string };

export function checkAgentName(name: string): NameCheck {
  if (!NAME.test(name)) return { ok: false, reason: "invalid_name", message: `name must be ${NAME_RULE}` };
  const key = name.toLowerCase();
  // `agent_…` is the form of ids: a name of that form would make routes ambiguous.
  if (RESERVED.has(key) || key.startsWith("svc-") || key.startsWith("agent_")) return { ok: false, reason: "name_reserved", message: `the name ${name} is reserved` };
  return { ok: true, key };
}

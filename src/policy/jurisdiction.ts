import { EXCLUDED_JURISDICTIONS, SERVED_JURISDICTIONS } from "../catalog/jurisdictions.js";
import { errors } from "../platform/rpc/errors.js";

// The jurisdiction gate. A caller states its jurisdiction in the `svc-jurisdiction` request header or
// the `jurisdiction` field of the call body (both: they must agree). A served code passes; CN is refused
// (409 `jurisdiction_excluded`); any other value is a 400. A call that states none is served as
// undeclared, and its policy manifest says so.

export const JURISDICTION_HEADER = "svc-jurisdiction";

export type Jurisdiction = (typeof SERVED_JURISDICTIONS)[number];

function norm(v: string | undefined): string | undefined {
  return v?.trim().toUpperCase() || undefined;
}

/** The caller's declared jurisdiction (undefined when none); throws the gate's refusal. */
export function checkJurisdiction(header: string | undefined, field: unknown): Jurisdiction | undefined {
  const fromField = typeof field === "string" ? field : field === undefined || field === null ? undefined : String(field);
  const h = norm(header);
  const f = norm(fromField);
  if (h && f && h !== f) {
    throw errors.invalidArgument("jurisdiction_conflict", `the ${JURISDICTION_HEADER} header (${h}) and the jurisdiction field (${f}) disagree`, [{ field: "jurisdiction", description: "disagrees with the header" }]);
  }
  const code = h ?? f;
  if (!code) return undefined;
  if ((EXCLUDED_JURISDICTIONS as readonly string[]).includes(code)) {
    throw errors.gateRefused("jurisdiction_excluded", `jurisdiction ${code} is not served (offshore and cross-border only); nothing was charged`, "jurisdiction");
  }
  if (!(SERVED_JURISDICTIONS as readonly string[]).includes(code)) {
    throw errors.invalidArgument("invalid_jurisdiction", `unknown jurisdiction ${code}; served: ${SERVED_JURISDICTIONS.join(", ")}`, [{ field: "jurisdiction", description: `one of ${SERVED_JURISDICTIONS.join(", ")}` }]);
  }
  return code as Jurisdiction;
}
